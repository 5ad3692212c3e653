// Functions Framework entry point: FUNCTION_TARGET=eligibility.
import { http } from "@google-cloud/functions-framework";
import { defaultEnvironment, preconnect as preconnectTo, serve } from "../runtime/serve.ts";
import { eligibility } from "./handler.ts";

const env = defaultEnvironment("eligibility");
http("eligibility", serve("eligibility", eligibility, env));
export const preconnect = preconnectTo(env);
