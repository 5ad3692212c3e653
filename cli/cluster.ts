/**
 * `poolrelay cluster up|down`: a local control plane for people, kept running in the background
 * until `down`. Its state (processes, folders, kubeconfig) is recorded in one file.
 */
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import {
  startControlPlane,
  stopControlPlane,
  type ControlPlaneInfo,
  type Profile,
} from "../dev/control-plane/index.ts";
import { alive } from "../dev/control-plane/processes.ts";
import { InputError, readText } from "./input.ts";

export function stateFile(env: NodeJS.ProcessEnv = process.env): string {
  return join(env["XDG_CACHE_HOME"] ?? join(homedir(), ".cache"), "dynamo-pool-relay", "cluster.json");
}

function readState(file: string): ControlPlaneInfo {
  const text = readText(file);
  let info: ControlPlaneInfo | null;
  try {
    info = JSON.parse(text) as ControlPlaneInfo | null;
  } catch (err) {
    throw new InputError(`${file}: invalid JSON: ${(err as Error).message}`);
  }
  if (!Array.isArray(info?.pids))
    throw new InputError(`${file}: pids: expected the control plane's process ids, got ${JSON.stringify(info?.pids)}`);
  return info;
}

function running(): ControlPlaneInfo | undefined {
  const file = stateFile();
  if (!existsSync(file)) return undefined;
  const info = readState(file);
  return info.pids.every(alive) ? info : undefined;
}

function howTo(info: ControlPlaneInfo): string {
  return [
    `control plane (${info.profile}) at ${info.server}`,
    `kubeconfig: ${info.kubeconfig}`,
    "",
    `  export KUBECONFIG=${info.kubeconfig}`,
    "  kubectl get crds",
    "  kubectl apply -f samples/eligible.yaml   # namespace 'inference' must exist: kubectl create ns inference",
    "  kubectl get dpr -A",
    "",
    "stop it with: poolrelay cluster down",
    "",
  ].join("\n");
}

export async function clusterUp(profile: Profile, out: (s: string) => void, err: (s: string) => void): Promise<void> {
  const existing = running();
  if (existing) {
    err("poolrelay: a control plane is already running\n");
    out(howTo(existing));
    return;
  }
  const started = Date.now();
  err(
    `poolrelay: starting a local control plane (profile ${profile}); a first run builds the binaries, which takes minutes\n`,
  );
  const cp = await startControlPlane({ profile, log: (l) => err(`  ${l}\n`) });
  const info: ControlPlaneInfo = {
    profile: cp.profile,
    dir: cp.dir,
    etcdData: cp.etcdData,
    kubeconfig: cp.kubeconfig,
    server: cp.server,
    pids: cp.pids,
  };
  mkdirSync(dirname(stateFile()), { recursive: true });
  writeFileSync(stateFile(), JSON.stringify(info, null, 2));
  err(`poolrelay: up in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  out(howTo(info));
}

export async function clusterDown(err: (s: string) => void): Promise<void> {
  const file = stateFile();
  if (!existsSync(file)) {
    err("poolrelay: no control plane is running\n");
    return;
  }
  const info = readState(file);
  await stopControlPlane(info);
  rmSync(file, { force: true });
  err("poolrelay: control plane stopped\n");
}
