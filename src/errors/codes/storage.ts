import type { ErrorSpec } from '../spec.js';

/** Storage: buckets, objects, transfers, images. */
export const STORAGE_ERRORS = {
  // storage
  BUCKET_NOT_FOUND: {
    status: 404,
    message: 'No such bucket.',
    nextActions: 'Check the bucket name; GET /api/storage/buckets lists buckets (admin).',
  },
  OBJECT_NOT_FOUND: {
    status: 404,
    message: 'No such object.',
    nextActions:
      'Check the bucket and key; an admin can list objects with GET /api/storage/buckets/{bucketName}/objects.',
  },
  INVALID_KEY: {
    status: 400,
    message: 'The object key is not valid.',
    nextActions:
      'Use 1-1024 bytes; "/" separates folders; no leading "/", no "." or ".." segments, no backslash or control characters.',
  },
  INVALID_MULTIPART: {
    status: 400,
    message: 'The multipart form is not valid.',
    nextActions:
      'Send multipart/form-data with the file in a field named "file" (and an optional "path" field before it).',
  },
  UPLOAD_NOT_FOUND: {
    status: 404,
    message: 'No upload was started for this key.',
    nextActions: 'Ask for an upload with POST /api/storage/buckets/{bucketName}/upload-strategy first.',
  },
  UPLOAD_INCOMPLETE: {
    status: 400,
    message: 'The object has not been uploaded yet.',
    nextActions: 'Upload the file to uploadUrl with the returned fields, then confirm again.',
  },
  UPLOAD_MISMATCH: {
    status: 400,
    message: 'The uploaded object does not match the size or ETag given.',
    nextActions: 'Upload the file again and confirm with its exact size in bytes.',
  },
  INVALID_SIGNED_URL: {
    status: 403,
    message: 'The signed URL is invalid or has expired.',
    nextActions: 'Ask for a new URL with POST .../objects/{objectKey}/download-strategy.',
  },
  INSUFFICIENT_STORAGE: {
    status: 507,
    message: 'The server has no space left to store the object.',
    nextActions:
      'Nothing was stored; try again later. The operator must free or add disk space under DATA_DIR/storage (or move storage to S3 with S3_BUCKET).',
  },
  RANGE_NOT_SATISFIABLE: {
    status: 416,
    message: 'The requested range is not satisfiable.',
    nextActions: 'Ask for a byte range inside the object; its size is in the Content-Range header.',
  },
  RESUMABLE_UPLOAD_NOT_FOUND: {
    status: 404,
    message: 'No such resumable upload, or it has expired.',
    nextActions:
      'Start a new upload with POST /api/storage/upload/resumable (tus clients do this when resuming fails).',
  },
  UPLOAD_OFFSET_MISMATCH: {
    status: 409,
    message: 'Upload-Offset does not match the bytes the server holds.',
    nextActions: 'Send HEAD to the upload URL and resume from the Upload-Offset it answers.',
  },
  TUS_VERSION_UNSUPPORTED: {
    status: 412,
    message: 'The request does not speak tus 1.0.0.',
    nextActions: 'Send the header "Tus-Resumable: 1.0.0" (tus clients such as tus-js-client do).',
  },
  UPLOAD_TOO_LONG: {
    status: 413,
    message: 'The bytes sent go past the declared Upload-Length.',
    nextActions: 'Send exactly Upload-Length bytes in all; HEAD the upload URL for the offset held.',
  },
  NOT_AN_IMAGE: {
    status: 415,
    message: 'The object is not an image that can be transformed.',
    nextActions:
      'Transform only JPEG, PNG, WebP, AVIF, GIF or TIFF objects; fetch other objects without width, height, resize, format or quality.',
  },
  IMAGE_TOO_LARGE: {
    status: 422,
    message: 'The image is too large to transform.',
    nextActions:
      'Transform images of at most IMAGE_MAX_INPUT_PIXELS pixels and IMAGE_MAX_INPUT_BYTES bytes, and ask for a width or height that keeps the rendition within IMAGE_MAX_OUTPUT_PIXELS (AVIF: IMAGE_MAX_AVIF_PIXELS); fetch the original without transform parameters.',
  },
  IMAGE_TOO_COSTLY: {
    status: 422,
    message: 'The rendition costs more than this server allows.',
    nextActions:
      'Ask for a smaller width or height, a lower quality, or a faster format (JPEG or WebP rather than AVIF); renders are stopped after IMAGE_RENDER_SECONDS.',
  },
  IMAGE_BUSY: {
    status: 503,
    message: 'The server is rendering as many images as it may.',
    nextActions:
      'Send the request again after the seconds in Retry-After; renders at once and waiting are bounded (IMAGE_CONCURRENT_RENDERS, IMAGE_RENDER_QUEUE).',
  },
} as const satisfies Record<string, ErrorSpec>;
