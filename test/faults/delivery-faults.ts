/**
 * Delivery faults, drawn for the delivery-fault proxy (delivery-proxy.ts): at set rates, a
 * delivery is answered 503 without being forwarded (an unavailable ingress or function),
 * forwarded with its reply lost (the work is done; the sender retries), or forwarded and, a moment
 * later, sent again (a late duplicate, reordered against what came in between). Seeded, so a run's
 * sequence can be reproduced; off until the suite sets a configuration.
 */

export type DeliveryFault = "unavailable" | "lostReply" | "lateDuplicate";

export interface DeliveryFaultConfig {
  seed: number;
  /** The destinations (`namespace/name` of a Broker or a Knative Service) whose deliveries get faults. */
  targets: string[];
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
export function drawOne<T extends string>(
  random: () => number,
  order: readonly T[],
  rates: Partial<Record<T, number>>,
): T | undefined {
  const r = random();
  let edge = 0;
  for (const fault of order) {
    edge += rates[fault] ?? 0;
    if (r < edge) return fault;
  }
  return undefined;
}

export class DeliveryFaults {
  readonly counts: Record<DeliveryFault, number> = { unavailable: 0, lostReply: 0, lateDuplicate: 0 };
  private config: DeliveryFaultConfig | undefined;
  private random: () => number = () => 1;

  /** A new configuration starts its seed's sequence again; undefined turns the faults off. */
  set(config: DeliveryFaultConfig | undefined): void {
    this.config = config;
    this.random = seeded(config?.seed ?? 0);
  }

  /** The fault for one delivery to `target`, if any. */
  draw(target: string): DeliveryFault | undefined {
    const c = this.config;
    if (!c || !c.targets.includes(target)) return undefined;
    const fault = drawOne(this.random, ORDER, c.rates);
    if (fault) this.counts[fault]++;
    return fault;
  }

  /** 0 to 2 s: late enough that other deliveries for the key come in between. */
  delayMs(): number {
    return Math.floor(this.random() * 2000);
  }
}
