// An owner of a control plane in a process of its own, for the hygiene tests: it runs `script`
// (an ES module body), which prints one JSON line once its control plane is up.
import { spawn, type ChildProcess } from "node:child_process";

export async function startOwner<T>(script: string): Promise<{ owner: ChildProcess } & T> {
  const owner = spawn(process.execPath, ["--input-type=module", "-e", script], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const up = await new Promise<T>((resolve, reject) => {
    let out = "";
    owner.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (line) resolve(JSON.parse(line) as T);
    });
    owner.on("exit", (code) => reject(new Error(`the owner exited early (${code})`)));
  });
  return { owner, ...up };
}
