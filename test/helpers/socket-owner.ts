import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** Inodes of the TCP sockets (IPv4 and IPv6) whose local port is `localPort` and remote port `remotePort`. */
function socketInodes(localPort: number, remotePort: number): Set<string> {
  const want = (port: number): string => port.toString(16).toUpperCase().padStart(4, '0');
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
      const fields = line.trim().split(/\s+/);
      const [local, remote, inode] = [fields[1], fields[2], fields[9]];
      if (!local || !remote || !inode || inode === '0') continue;
      if (local.endsWith(`:${want(localPort)}`) && remote.endsWith(`:${want(remotePort)}`)) inodes.add(inode);
    }
  }
  return inodes;
}

/**
 * Which of `candidates` (pids) holds the client end of a TCP connection on this machine: the
 * connection a server sees as coming from `peerPort` to its own `serverPort`. Matches the socket's
 * inode in /proc/net/tcp{,6} against /proc/<pid>/fd of each candidate only, so nothing but a
 * process the caller started is ever named. Null when none of them holds it.
 */
export function peerPid(peerPort: number, serverPort: number, candidates: readonly number[]): number | null {
  const inodes = socketInodes(peerPort, serverPort);
  if (inodes.size === 0) return null;
  for (const pid of candidates) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (match && inodes.has(match[1] as string)) return pid;
      } catch {
        // closed meanwhile
      }
    }
  }
  return null;
}

/** The crawler id a process was started with (ACKCRAWL_CRAWLER_ID in its environment). */
export function crawlerIdOf(pid: number): string | null {
  try {
    const env = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    return (
      env.find((e) => e.startsWith('ACKCRAWL_CRAWLER_ID='))?.slice('ACKCRAWL_CRAWLER_ID='.length) ?? null
    );
  } catch {
    return null;
  }
}
