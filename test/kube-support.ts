// Shared steps of the Kubernetes adapter's unit tests (shared/kube/client*.test.ts).
import { expect } from "vitest";

/** A loopback API server's connection: no credentials, no TLS options. */
export const plain = (server: string) => ({ server, httpsOptions: async () => ({}) });

/** What the promise rejected with, checked to be an instance of `type`. */
export async function rejectedWith<E extends Error>(
  p: Promise<unknown>,
  type: abstract new (...args: never[]) => E,
): Promise<E> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(type);
  return err as E;
}

// A self-signed test certificate for 127.0.0.1 and kube.invalid, valid 2000-2100; its key guards nothing.
export const TEST_CERT = `-----BEGIN CERTIFICATE-----
MIIBnjCCAUSgAwIBAgIBATAKBggqhkjOPQQDAjAdMRswGQYDVQQDDBJwb29scmVs
YXktdGVzdC1hcGkwIBcNMDAwMTAxMDAwMDAwWhgPMjEwMDAxMDEwMDAwMDBaMB0x
GzAZBgNVBAMMEnBvb2xyZWxheS10ZXN0LWFwaTBZMBMGByqGSM49AgEGCCqGSM49
AwEHA0IABCi1Q1aYVkafCha0DK2bdi+enfEQfBuDcG5y+eWxi6JX2i8NCHL6Sr56
ai2hbmDgVbczU3uSOTOAlQmZlZlma0WjczBxMB0GA1UdEQQWMBSHBH8AAAGCDGt1
YmUuaW52YWxpZDAPBgNVHRMBAf8EBTADAQH/MAsGA1UdDwQEAwIChDATBgNVHSUE
DDAKBggrBgEFBQcDATAdBgNVHQ4EFgQUM1W4Jnb7bberZSiqOM4WBchGKOAwCgYI
KoZIzj0EAwIDSAAwRQIhAJBEZ8LM9El8s25l9fVSJ4rR+BcLtvLisg9X58Q9D3wf
AiANXm2XxolZnEH8RR30KlvvMEZb6HWHWQb0RHmKmxJRCQ==
-----END CERTIFICATE-----
`;
export const TEST_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgBEfCvP0+vQuhJJAi
7JGeiyv+YilRYMxD7anuFey2dSehRANCAAQotUNWmFZGnwoWtAytm3Yvnp3xEHwb
g3BucvnlsYuiV9ovDQhy+kq+emotoW5g4FW3M1N7kjkzgJUJmZWZZmtF
-----END PRIVATE KEY-----
`;
