/**
 * `npm start`'s script execs node, so npm is this process's parent and passes its signals on. When
 * npm dies without passing one on (SIGKILL, a crash), this process is re-parented: that is the
 * signal to stop. Only the parent is watched: a user's shell, sshd or terminal going away is not
 * this process's business (nohup, disown and setsid keep working). `parent`: the pid to watch for,
 * when known before this is called (a parent gone by then is otherwise never noticed).
 */
export function onParentGone(gone: () => void, periodMs = 500, parent = process.ppid): () => void {
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    gone();
  }, periodMs);
  timer.unref();
  return () => clearInterval(timer);
}
