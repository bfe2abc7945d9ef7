package catalog

import "strings"

// MatchToolPattern reports whether pattern matches the tool named tool (the
// server's own name) of server. A pattern is either "SERVER/TOOL", matched
// against server + "/" + tool, or a host-facing name (one without "/"),
// matched against ToolName(server, tool). In both, "*" matches any run of
// bytes (the empty one included) and every other byte matches itself.
// So "github/*" denies every tool of server github, "*/delete_*" every
// tool whose name starts with "delete_", "mcp__github__create_issue" one
// tool by its host-facing name. An empty pattern matches nothing.
//
// MatchToolPattern is pure and runs in time proportional to the lengths of
// its inputs times the number of "*" in pattern, at worst.
func MatchToolPattern(pattern, server, tool string) bool {
	if pattern == "" {
		return false
	}
	if strings.Contains(pattern, "/") {
		return WildcardMatch(pattern, server+"/"+tool)
	}
	return WildcardMatch(pattern, ToolName(server, tool))
}

// WildcardMatch reports whether s matches pattern, in which "*" matches
// any run of bytes (the empty one included) and every other byte matches
// itself. It backtracks only to the last "*", so it never takes more than
// len(pattern)*len(s) steps.
func WildcardMatch(pattern, s string) bool {
	p, i := 0, 0
	star, mark := -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case p < len(pattern) && pattern[p] == s[i]:
			p++
			i++
		case star >= 0:
			p = star + 1
			mark++
			i = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// toolDenied reports whether one of patterns matches tool of server (as
// MatchToolPattern does), computing each form of the name at most once.
func toolDenied(patterns []string, server, tool string) bool {
	var slash, host string
	for _, p := range patterns {
		switch {
		case p == "":
		case strings.Contains(p, "/"):
			if slash == "" {
				slash = server + "/" + tool
			}
			if WildcardMatch(p, slash) {
				return true
			}
		default:
			if host == "" {
				host = ToolName(server, tool)
			}
			if WildcardMatch(p, host) {
				return true
			}
		}
	}
	return false
}
