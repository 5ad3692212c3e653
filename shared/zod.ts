/**
 * The zod every schema of the product is written in: zod/mini, because each function loads its
 * schemas at every cold start and full zod is over ten times its size in each bundle. Mini loads no
 * locale (its messages would all be "Invalid input"); English gives the messages full zod gives.
 *
 * Import it as a namespace, `import * as z from "./zod.ts"`: the bundler then keeps only what is
 * used. zod/mini's own `z` export is one object that holds all of zod/mini and every locale.
 */
import { en } from "zod/locales";
import { config } from "zod/mini";

config(en());

export * from "zod/mini";
