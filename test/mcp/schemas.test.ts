// One schema per operation (issue #39 item 3): the MCP tools take the input schemas the HTTP
// routes take, declared once in their area (src/<area>/schemas.ts). A tool that re-declares a
// field (and drifts: a name of 128 characters on MCP but 200 over HTTP) fails here.
import { describe, expect, it } from 'vitest';
import { type TSchema, Type } from 'typebox';
import { functionTools } from '../../src/mcp/tools/functions.js';
import { scheduleTools } from '../../src/mcp/tools/schedules.js';
import { storageTools } from '../../src/mcp/tools/storage.js';
import { webhookTools } from '../../src/mcp/tools/webhooks.js';
import { databaseTools } from '../../src/mcp/tools/database.js';
import { metadataTools } from '../../src/mcp/tools/metadata.js';
import { recordsTools } from '../../src/mcp/tools/records.js';
import { CreateFunction, FunctionSlug, UpdateFunction } from '../../src/functions/schemas.js';
import { CreateSchedule, UpdateSchedule } from '../../src/schedules/schemas.js';
import { BucketName } from '../../src/storage/schemas.js';
import { CreateWebhook, DeliveriesPage, DeliveryId, UpdateWebhook, WebhookId } from '../../src/webhooks/schemas.js';
import { InsertRows, Row, RunSql, TableRef } from '../../src/database/schemas.js';

const tools = [
  ...functionTools,
  ...scheduleTools,
  ...storageTools,
  ...webhookTools,
  ...databaseTools,
  ...metadataTools,
  ...recordsTools,
];
const input = (name: string) => {
  const t = tools.find((x) => x.name === name);
  if (!t) throw new Error(`no tool ${name}`);
  return t.input as TSchema & { properties: Record<string, unknown>; required?: string[] };
};
const plain = (s: unknown) => JSON.parse(JSON.stringify(s));

/** [tool, the route's schema (its path parameters added)]: the tool's input has exactly these fields. */
const SAME: Array<[string, Record<string, unknown>, string[]]> = [
  ['create-function', CreateFunction.properties, CreateFunction.required ?? []],
  ['update-function', { slug: FunctionSlug, ...UpdateFunction.properties }, ['slug']],
  ['get-function', { slug: FunctionSlug }, ['slug']],
  ['delete-function', { slug: FunctionSlug }, ['slug']],
  ['create-schedule', CreateSchedule.properties, CreateSchedule.required ?? []],
  ['update-schedule', { id: input('update-schedule').properties.id, ...UpdateSchedule.properties }, ['id']],
  ['create-webhook', CreateWebhook.properties, CreateWebhook.required ?? []],
  ['update-webhook', { id: WebhookId, ...UpdateWebhook.properties }, ['id']],
  ['delete-webhook', { id: WebhookId }, ['id']],
  ['list-webhook-deliveries', { id: WebhookId, ...DeliveriesPage }, ['id', 'limit', 'offset']],
  ['redeliver-webhook', { id: WebhookId, deliveryId: DeliveryId }, ['id', 'deliveryId']],
  ['run-raw-sql', RunSql.properties, RunSql.required ?? []],
  ['get-table-schema', { tableName: TableRef }, ['tableName']],
];

describe('MCP tools take the HTTP routes’ input schemas', () => {
  it.each(SAME)('%s', (name, properties, required) => {
    const s = input(name);
    expect(plain(s.properties)).toEqual(plain(properties));
    expect([...(s.required ?? [])].sort()).toEqual([...required].sort());
  });

  it('a bucket is named by the same rule on every storage tool', () => {
    const named = storageTools.filter((t) => 'bucketName' in ((t.input as { properties?: object }).properties ?? {}));
    expect(named.length).toBeGreaterThan(3);
    for (const t of named)
      expect(plain((t.input as { properties: { bucketName: unknown } }).properties.bucketName)).toEqual(
        plain(BucketName),
      );
  });

  it('a table is named as the routes name it, and written with the insert body of POST /records/{table}', () => {
    for (const name of ['select-records', 'write-records', 'bulk-upsert'])
      expect(plain(input(name).properties.table)).toEqual(plain(TableRef));
    expect(plain(input('write-records').properties.body)).toEqual(plain(Type.Union([Row, InsertRows])));
  });
});
