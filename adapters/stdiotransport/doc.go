// Package stdiotransport launches MCP stdio servers for a go-sdk client
// under a host-owned process authority: admit first, construct after.
//
// A Launcher turns a materialized ports.Target into a *Transport only after
// the ports.ProcessAuthority granted the launch; nothing is read from the
// target's environment, constructed or spawned before that. The Transport
// implements the go-sdk's mcp.Transport; its Connect asks the authority
// again and re-checks the working directory immediately before it spawns.
// The re-check narrows, but cannot close, the window in which a concurrent
// writer replaces part of the filesystem between the check and the spawn.
//
// What runs, exactly:
//
//   - No shell. exec.Cmd.Args is [Target.Command, Target.Args...] passed
//     to execve as is. Cmd.Path is resolved by mcpward, never by os/exec: a
//     command containing a '/' is taken as a path (relative to the child's
//     working directory when not absolute); a bare name is looked up in the
//     CHILD's PATH (from the granted environment), in order, skipping empty
//     and relative entries. The parent's PATH is never consulted.
//   - The environment is exactly the grant's BaselineEnv with the target's
//     Env applied over it (the target wins on a shared key); every key is
//     set explicitly, an empty value as "KEY=". Nothing else of the parent's
//     environment reaches the child, and this package never reads the
//     parent's environment (see DefaultBaseline for a host's helper).
//   - The working directory is always set explicitly: an absent cwd means
//     the grant's AllowedRoot, a relative one is relative to it. The child
//     runs in the canonical (symlink-free) path that was checked.
//   - The child leads its own process group. Every signal goes to the whole
//     group, and when the direct child exits, what remains of its group is
//     killed, so grandchildren do not outlive the session (a descendant
//     that leaves the group, for example with setsid, is not tracked).
//   - Stderr is drained: its byte count and its last StderrTailBytes
//     (16 KiB) are kept in memory, and handed out only by
//     Transport.StderrTail (at most StderrTailLines whole lines), never in
//     an error. Stats reports the child's exit status, and whether it
//     exited on its own or because this side ended it.
//   - Every inbound line from the child's stdout is capped (the receive
//     cap); a longer line ends the connection with a *refusal.Error of
//     Class Protocol, Reason "receive_cap_exceeded". Lines are framed and
//     decoded by this package (newline-delimited JSON-RPC 2.0, one message
//     a line, no batches), deciding as the SDK's own decoder does; a line
//     that is not one message ends the connection with Class Protocol,
//     Reason "malformed_message".
//   - An inbound filter (Transport.SetInboundFilter, mcpsession's gate)
//     sees every request and notification before the SDK queues it, so a
//     flood of notifications can be coalesced.
//
// The same framing serves the other direction: ServerTransport is the
// go-sdk transport of a stdio server (mcpward serve) over its stdin and
// stdout, in place of the SDK's IOTransport.
//
// Every failure is a *refusal.Error (package core/refusal) that carries the
// server id and a stable reason word, never argv, an environment value, a
// path or stderr text:
//
//	Refused      process_refused (or the authority's own Refused reason),
//	             root_invalid, cwd_invalid, cwd_not_found,
//	             cwd_not_directory, cwd_outside_root
//	Config       transport_kind_mismatch, command_empty, argv_invalid,
//	             env_invalid, grant_env_invalid, program_not_found,
//	             program_not_executable
//	Protocol     receive_cap_exceeded, malformed_message
//	Transient    canceled, transport_closed, child_killed, spawn_failed,
//	             close_timeout
//	Unsupported  platform_unsupported (any GOOS but linux and darwin)
//	Internal     transport_reused
package stdiotransport
