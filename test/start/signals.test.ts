// `npm start` stops everything it started, in order, when only npm is signalled (as a supervisor,
// a CI timeout or `kill PID` does); and when its own process is killed outright, its control
// plane's watchdog does. Either way nothing of the node is left on the host: no process
// (containerd, a shim, a container, the kubelet), mount, network namespace, link, cgroup or folder
// (test/node-leftovers.ts). Each case signals a real `npm start` while it installs the product, once
// its control plane, node and Knative (all there is to stop) are up: what is left to start does not
// change how it stops. samples.test.ts stops a whole product, Ready, with a Ctrl-C to the group and
// with SIGTERM to npm. A real `npm start` on this host, so this file runs on its own
// (vitest.start.config.ts).
import { describe, it } from "vitest";
import { npmStarting, signalAndCheck } from "./npm-start.ts";

describe("npm start, signalled while it installs the product", () => {
  it.each([
    { signal: "SIGINT", to: "npm" },
    { signal: "SIGKILL", to: "npm" },
    // No stop at all: the control plane's watchdog sees its owner gone.
    { signal: "SIGKILL", to: "start" },
  ] as const)("leaves nothing of the control plane, the node or Knative on $signal to the $to", async (signalled) => {
    await signalAndCheck(await npmStarting(["--no-samples"]), signalled);
  });
});
