// Functions Framework entry point: FUNCTION_TARGET=eligibility.
import { http } from "@google-cloud/functions-framework";
import { defaultEnvironment, serve } from "../runtime/serve.ts";
import { eligibility } from "./handler.ts";

http("eligibility", serve("eligibility", eligibility, defaultEnvironment()));
