// `poolrelay cluster up` leaves a control plane running in the background for kubectl, with the
// CRDs installed, and `poolrelay cluster down` stops every process of it. Real processes, its own
// state folder; in the start suite because it binds the control plane's ports.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { KubeClient, connect } from "../../shared/kube/client.ts";
import { alive, isolatedEnv, root } from "./npm-start.ts";

describe("poolrelay cluster", () => {
  it("up starts a control plane that outlives the command, up again finds it, down stops it", async () => {
    const { env, cacheHome } = isolatedEnv();
    const poolrelay = (...args: string[]) =>
      spawnSync(process.execPath, ["bin/poolrelay.js", ...args], { cwd: root, env, encoding: "utf8" });
    const stateFile = join(cacheHome, "dynamo-pool-relay", "cluster.json");

    const up = poolrelay("cluster", "up", "--profile", "api");
    expect(up.stderr).toMatch(/poolrelay: up in [\d.]+ s\n/);
    expect(up.status).toBe(0);
    const state = JSON.parse(readFileSync(stateFile, "utf8")) as {
      kubeconfig: string;
      pids: number[];
      dir: string;
      profile: string;
    };
    expect(state.profile).toBe("api");
    expect(up.stdout).toContain(`kubeconfig: ${state.kubeconfig}\n`);
    expect(up.stdout).toContain(`  export KUBECONFIG=${state.kubeconfig}\n`);
    // The command has exited; its control plane runs on and serves the CRD.
    expect(state.pids.length).toBeGreaterThanOrEqual(2);
    expect(state.pids.every(alive)).toBe(true);
    const admin = new KubeClient(await connect(state.kubeconfig));
    expect(
      await admin.get({
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "CustomResourceDefinition",
        name: "dynamopoolrelays.nvidia.com",
      }),
    ).toMatchObject({ spec: { group: "nvidia.com" } });

    const again = poolrelay("cluster", "up");
    expect(again.status).toBe(0);
    expect(again.stderr).toBe("poolrelay: a control plane is already running\n");
    expect(again.stdout).toContain(`kubeconfig: ${state.kubeconfig}\n`);

    const down = poolrelay("cluster", "down");
    expect(down.stderr).toBe("poolrelay: control plane stopped\n");
    expect(down.status).toBe(0);
    expect(state.pids.filter(alive)).toEqual([]);
    expect(existsSync(stateFile)).toBe(false);

    const downAgain = poolrelay("cluster", "down");
    expect(downAgain.status).toBe(0);
    expect(downAgain.stderr).toBe("poolrelay: no control plane is running\n");
  }, 240_000);
});
