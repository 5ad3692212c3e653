// The baseline: an empty Functions Framework function that acknowledges every request.
import { http } from "@google-cloud/functions-framework";

http("empty", (_req, res) => {
  res.status(204).end();
});
