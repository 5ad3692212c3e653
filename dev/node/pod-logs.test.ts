import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { containerOf, followPodLogs, keptLog, parseCriLine } from "./pod-logs.ts";

const T = "2026-03-01T10:00:00.123456789Z";

describe("parseCriLine", () => {
  it.each([
    {
      line: `${T} stdout F {"function":"apply"}`,
      want: { time: T, stream: "stdout", partial: false, text: '{"function":"apply"}' },
    },
    { line: `${T} stderr F warn: slow`, want: { time: T, stream: "stderr", partial: false, text: "warn: slow" } },
    {
      line: `${T} stdout P the first half `,
      want: { time: T, stream: "stdout", partial: true, text: "the first half " },
    },
    // An empty line is still a line; spaces in the text are the text's.
    { line: `${T} stdout F `, want: { time: T, stream: "stdout", partial: false, text: "" } },
    { line: `${T} stdout F  two  spaces `, want: { time: T, stream: "stdout", partial: false, text: " two  spaces " } },
    // Tags after the first are the runtime's; the first alone says partial or full.
    { line: `${T} stdout P:x more`, want: { time: T, stream: "stdout", partial: true, text: "more" } },
    { line: `${T} stdin F x`, want: undefined },
    { line: `${T} stdout X x`, want: undefined },
    { line: `${T} stdout F`, want: undefined },
    { line: "plain text, no CRI prefix", want: undefined },
    { line: "", want: undefined },
  ])("$line", ({ line, want }) => {
    expect(parseCriLine(line)).toEqual(want);
  });
});

describe("containerOf and keptLog", () => {
  it.each([
    {
      path: "dynamo-system_poolrelay-apply-00001-deployment-7d9f-x2x_1b4e28ba-2fa1-11d2-883f-0016d3cca427/user-container/0.log",
      want: {
        namespace: "dynamo-system",
        pod: "poolrelay-apply-00001-deployment-7d9f-x2x",
        container: "user-container",
      },
      kept: "/k/dynamo-system/poolrelay-apply-00001-deployment-7d9f-x2x/user-container.log",
    },
    // A restart writes 1.log: the same container, the same kept file.
    {
      path: "kube-system_coredns-abc_0f0e/coredns/1.log",
      want: { namespace: "kube-system", pod: "coredns-abc", container: "coredns" },
      kept: "/k/kube-system/coredns-abc/coredns.log",
    },
    {
      path: "default_web.v2_0f0e/c/0.log",
      want: { namespace: "default", pod: "web.v2", container: "c" },
      kept: "/k/default/web.v2/c.log",
    },
    // Rotated and compressed files are read through the current file's rotation, not as logs of their own.
    { path: "default_p_0f0e/c/0.log.20260301-100000", want: undefined },
    { path: "default_p_0f0e/c/0.log.20260301-100000.gz", want: undefined },
    { path: "default_p_0f0e/c", want: undefined },
    { path: "default_p/c/0.log", want: undefined },
    { path: "../default_p_0f0e/c/0.log", want: undefined },
  ])("$path", ({ path, want, kept }) => {
    const c = containerOf(path);
    expect(c).toEqual(want);
    if (c) expect(keptLog("/k", c)).toBe(kept);
  });
});

describe("followPodLogs", () => {
  it("keeps every whole line of a container after its pod's files are gone, across a rotation and a split line", () => {
    const from = mkdtempSync(join(tmpdir(), "pod-logs-from-"));
    const to = mkdtempSync(join(tmpdir(), "pod-logs-to-"));
    onTestFinished(() => [from, to].forEach((d) => rmSync(d, { recursive: true, force: true })));
    const podDir = join(from, "ns_fn-1_0f0e");
    const file = join(podDir, "user-container", "0.log");
    mkdirSync(join(podDir, "user-container"), { recursive: true });
    const seen: string[] = [];
    const logs = followPodLogs(from, to, (c, text) => seen.push(`${c.pod}/${c.container}: ${text}`), 3_600_000);
    onTestFinished(() => logs.stop());

    appendFileSync(file, `${T} stdout F one\n${T} stdout P tw`);
    logs.sweep();
    // The half-written line waits for its end.
    appendFileSync(file, `o-a\n${T} stdout P , two-b\n${T} stdout F , two-c\n`);
    logs.sweep();
    // The kubelet rotates: the file is renamed, lines written before the runtime reopens it land in the old one.
    appendFileSync(file, `${T} stderr F three\n`);
    renameSync(file, `${file}.20260301-100000`);
    appendFileSync(`${file}.20260301-100000`, `${T} stdout F four\n`);
    logs.sweep();
    appendFileSync(file, `${T} stdout F five\n`);
    logs.sweep();
    rmSync(podDir, { recursive: true });
    logs.sweep();

    const want = ["one", "two-a, two-b, two-c", "three", "four", "five"];
    expect(readFileSync(join(to, "ns", "fn-1", "user-container.log"), "utf8")).toBe(want.map((l) => `${l}\n`).join(""));
    expect(seen).toEqual(want.map((l) => `fn-1/user-container: ${l}`));
  });
});
