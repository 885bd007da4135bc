// What must never reach a customer or the model: the words of an outage (socket errors, pg's
// own messages), where things run (hosts, connection strings) and how the code is laid out
// (stack frames). Demo replies say "left at Block A" and "delivered at 14:05", so "at " counts
// only when a path follows it.

/** Patterns of infrastructure text, each with the name the soak reports it under. */
export const INFRA_PATTERNS: readonly { name: string; pattern: RegExp }[] = [
  { name: 'socket error code', pattern: /\bE(?:CONNREFUSED|CONNRESET|CONNABORTED|TIMEDOUT|PIPE|HOSTUNREACH|NOTFOUND|AI_AGAIN)\b/ },
  { name: 'loopback address', pattern: /\b127\.0\.0\.1\b|\blocalhost:\d+/i },
  { name: 'connection string', pattern: /\bpostgres(?:ql)?:\/\//i },
  { name: 'stack', pattern: /\bstack\b/i },
  { name: 'stack frame', pattern: /\bat (?:[\w$.<>[\] ]+ \()?(?:\/|[A-Za-z]:\\|node:|file:)[^\s)]*/ },
  { name: 'database error', pattern: /\bConnection terminated\b|\btimeout exceeded when trying to connect\b|\bterminating connection\b|\bSQLSTATE\b|\bsocket hang up\b/i },
];

/** The first piece of infrastructure text in `text`, named, or undefined when it is clean. */
export function findInfrastructureText(text: string): { name: string; match: string } | undefined {
  for (const { name, pattern } of INFRA_PATTERNS) {
    const m = pattern.exec(text);
    if (m) return { name, match: m[0] };
  }
  return undefined;
}
