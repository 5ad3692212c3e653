// Functions Framework entry point: FUNCTION_TARGET=status.
import { http } from "@google-cloud/functions-framework";
import { defaultEnvironment, preconnect as preconnectTo, serve } from "../runtime/serve.ts";
import { status } from "./handler.ts";

const env = defaultEnvironment("status");
http("status", serve("status", status, env));
export const preconnect = preconnectTo(env);
