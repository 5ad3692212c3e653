// What a profile node start builds when it is missing: the node's programs, Knative's, and the
// images. The product's image is keyed by every file of the work tree, so an edit anywhere rebuilds
// it (a minute here) in the next start; a bench that times a start builds them first, so that the
// time is the start's own.
import { ensureImages, ensureKnative, ensureNode } from "../dev/control-plane/binaries.ts";

export function buildNodeAssets(): void {
  ensureImages(ensureNode(), ensureKnative().bin);
}
