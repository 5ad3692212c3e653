// Shared steps of the Kubernetes adapter's unit tests (shared/kube/client*.test.ts).
import { expect } from "vitest";

/** A loopback API server's connection: no credentials, no TLS options. */
export const plain = (server: string) => ({ server, httpsOptions: async () => ({}) });

/** What the promise rejected with, checked to be an instance of `type`. */
export async function rejectedWith<E extends Error>(p: Promise<unknown>, type: abstract new (...args: never[]) => E): Promise<E> {
  const err = await p.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(type);
  return err as E;
}
