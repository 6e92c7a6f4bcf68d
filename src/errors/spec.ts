/** One entry of the error catalogue: the status, default message and next action of a code. */
export interface ErrorSpec {
  status: number;
  message: string;
  nextActions: string;
}
