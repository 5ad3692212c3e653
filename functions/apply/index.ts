// Functions Framework entry point: FUNCTION_TARGET=apply.
import { http } from "@google-cloud/functions-framework";
import { defaultEnvironment, serve } from "../runtime/serve.ts";
import { apply } from "./handler.ts";

http("apply", serve("apply", apply, defaultEnvironment()));
