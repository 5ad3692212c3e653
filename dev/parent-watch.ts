/**
 * `npm start`'s script execs node, so npm is this process's parent and passes its signals on. When
 * npm dies without passing one on (SIGKILL, a crash), this process is re-parented: that is the
 * signal to stop. Only the parent is watched: a user's shell, sshd or terminal going away is not
 * this process's business (nohup, disown and setsid keep working).
 */
export function onParentGone(gone: () => void, periodMs = 500): () => void {
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    gone();
  }, periodMs);
  timer.unref();
  return () => clearInterval(timer);
}
