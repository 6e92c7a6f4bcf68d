// A slow consumer: a client that does not read what it is sent. Its queued bytes are bounded.
import type { Socket } from 'socket.io';

/**
 * Counts the bytes queued for a socket (engine.io's write buffer, waiting for the WebSocket,
 * plus what the WebSocket holds beyond the kernel's buffer) as packets are created and
 * flushed; past `maxBytes` the connection is closed at once and `onSlow` is told.
 */
export function watchSlowConsumer(socket: Socket, maxBytes: number, onSlow: () => void): void {
  type Packet = { data?: unknown };
  const conn = socket.conn as unknown as {
    on(e: 'packetCreate' | 'flush', fn: (p: Packet & Packet[]) => void): void;
    transport?: { socket?: { bufferedAmount?: number; terminate?: () => void } };
    close(discard?: boolean): void;
    readyState: string;
  };
  let queued = 0;
  conn.on('packetCreate', (packet) => {
    queued += sizeOf(packet.data);
    const ws = conn.transport?.socket;
    if (queued + (ws?.bufferedAmount ?? 0) <= maxBytes || conn.readyState !== 'open') return;
    onSlow();
    conn.close(true);
    // No closing handshake with a peer that does not read: free the buffers now.
    ws?.terminate?.();
  });
  conn.on('flush', (packets) => {
    for (const p of packets) queued -= sizeOf(p.data);
  });
}

function sizeOf(data: unknown): number {
  if (typeof data === 'string') return data.length;
  if (data instanceof Uint8Array || data instanceof ArrayBuffer) return data.byteLength;
  return 0;
}
