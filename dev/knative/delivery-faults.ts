/**
 * Delivery faults, for the fault suite: the cluster-address proxy can, at set rates, answer a
 * delivery 503 without forwarding it (an unavailable ingress or function), forward it and lose the
 * reply (the work is done; the sender retries), or forward it and, a moment later, the same request
 * again (a late duplicate, reordered against what came in between). The suite steers it by writing
 * DIR/delivery-faults.json and counts DIR/delivery-faults.json.log; without the file nothing is injected.
 */
import { appendFileSync, existsSync, readFileSync, statSync } from "node:fs";

export type DeliveryFault = "unavailable" | "lostReply" | "lateDuplicate";

export interface DeliveryFaultConfig {
  seed: number;
  /** Hosts (`name.namespace`, as cluster DNS names them) whose deliveries get faults. */
  hosts: string[];
  rates: Partial<Record<DeliveryFault, number>>;
}

const ORDER: DeliveryFault[] = ["unavailable", "lostReply", "lateDuplicate"];

/** mulberry32: a small seeded generator, so a run's fault sequence is reproducible. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Draws at most one of `order` (in that order, each at its rate): one random number a draw. */
export function drawOne<T extends string>(random: () => number, order: readonly T[], rates: Partial<Record<T, number>>): T | undefined {
  const r = random();
  let edge = 0;
  for (const fault of order) {
    edge += rates[fault] ?? 0;
    if (r < edge) return fault;
  }
  return undefined;
}

/** Reads the file again whenever it changes; each fault drawn is logged, a line each, to FILE.log. */
export class DeliveryFaults {
  private config: DeliveryFaultConfig | undefined;
  private random: () => number = () => 1;
  private loadedAt = -1;
  private readonly file: string;

  constructor(file: string) {
    this.file = file;
  }

  /** The fault for one delivery to `name.namespace`, if any. */
  draw(host: { name: string; namespace: string }): DeliveryFault | undefined {
    this.reload();
    const c = this.config;
    if (!c || !c.hosts.includes(`${host.name}.${host.namespace}`)) return undefined;
    const fault = drawOne(this.random, ORDER, c.rates);
    if (fault) appendFileSync(`${this.file}.log`, `${fault} ${host.name}.${host.namespace}\n`);
    return fault;
  }

  /** 0 to 2 s: late enough that other deliveries for the key come in between. */
  delayMs(): number {
    return Math.floor(this.random() * 2000);
  }

  private reload(): void {
    const mtime = existsSync(this.file) ? statSync(this.file).mtimeMs : 0;
    if (mtime === this.loadedAt) return;
    this.loadedAt = mtime;
    this.config = mtime ? (JSON.parse(readFileSync(this.file, "utf8")) as DeliveryFaultConfig) : undefined;
    this.random = seeded(this.config?.seed ?? 0);
  }
}
