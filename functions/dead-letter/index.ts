// Functions Framework entry point: FUNCTION_TARGET=dead-letter.
import { http } from "@google-cloud/functions-framework";
import { defaultEnvironment, serve } from "../runtime/serve.ts";
import { deadLetter } from "./handler.ts";

http("dead-letter", serve("dead-letter", deadLetter, defaultEnvironment("dead-letter")));
