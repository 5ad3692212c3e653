import { describe, expect, it } from "vitest";
import { ApiError, isConflict } from "./errors.ts";

describe("ApiError", () => {
  it("carries the server's status, reason, message and Retry-After under the name ApiError", () => {
    const err = new ApiError(429, "TooManyRequests", "slow down", 3);
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe("ApiError");
    expect(String(err)).toBe("ApiError: slow down");
    expect(err.status).toBe(429);
    expect(err.reason).toBe("TooManyRequests");
    expect(err.message).toBe("slow down");
    expect(err.retryAfterSeconds).toBe(3);
  });

  it("has no Retry-After when the server named none", () => {
    expect(new ApiError(503, "ServiceUnavailable", "down").retryAfterSeconds).toBeUndefined();
  });

  it.each([
    { status: 500, transient: true },
    { status: 503, transient: true },
    { status: 504, transient: true },
    { status: 429, transient: true },
    { status: 409, transient: true },
    { status: 408, transient: true },
    { status: 0, transient: true },
    { status: 499, transient: false },
    { status: 400, transient: false },
    { status: 401, transient: false },
    { status: 403, transient: false },
    { status: 404, transient: false },
    { status: 410, transient: false },
    { status: 422, transient: false },
  ])("status $status is transient: $transient", ({ status, transient }) => {
    expect(new ApiError(status, "Reason", "message").transient).toBe(transient);
  });
});

describe("isConflict", () => {
  it.each<{ name: string; err: unknown; conflict: boolean }>([
    {
      name: "an ApiError with status 409",
      err: new ApiError(409, "Conflict", "the object has been modified"),
      conflict: true,
    },
    { name: "an ApiError with status 404", err: new ApiError(404, "NotFound", "not found"), conflict: false },
    { name: "an ApiError with status 500", err: new ApiError(500, "InternalError", "boom"), conflict: false },
    { name: "a plain object with status 409", err: { status: 409 }, conflict: false },
    { name: "an Error that is no ApiError", err: new Error("conflict"), conflict: false },
    { name: "undefined", err: undefined, conflict: false },
  ])("$name is a conflict: $conflict", ({ err, conflict }) => {
    expect(isConflict(err)).toBe(conflict);
  });
});
