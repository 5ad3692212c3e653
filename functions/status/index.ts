// Functions Framework entry point: FUNCTION_TARGET=status.
import { http } from "@google-cloud/functions-framework";
import { defaultEnvironment, serve } from "../runtime/serve.ts";
import { status } from "./handler.ts";

http("status", serve("status", status, defaultEnvironment()));
