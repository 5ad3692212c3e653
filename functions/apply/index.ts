// Functions Framework entry point: FUNCTION_TARGET=apply.
import { http } from "@google-cloud/functions-framework";
import { defaultEnvironment, preconnect as preconnectTo, serve } from "../runtime/serve.ts";
import { apply } from "./handler.ts";

const env = defaultEnvironment("apply");
http("apply", serve("apply", apply, env));
export const preconnect = preconnectTo(env);
