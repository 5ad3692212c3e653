// The node's programs and images, built (or found in the cache) once before the suite: each case's
// `npm start` then finds them warm, so its wait covers a start, not a build (any edit to the
// repository makes the product's image anew).
import { ensureBinaries, ensureImages, ensureKnative, ensureNode } from "../../dev/control-plane/binaries.ts";

export function setup() {
  ensureBinaries();
  ensureImages(ensureNode(), ensureKnative().bin);
}
