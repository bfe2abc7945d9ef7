package definition

import (
	"slices"
	"strings"
)

// The reason words Resolve gives a name the managed policy refuses (State
// StateRefused). The fix is the administrator's, not the user's.
const (
	// ReasonPolicyDenied: an entry of a managed deniedMcpServers list
	// matches the server.
	ReasonPolicyDenied = "policy_denied"
	// ReasonPolicyNotAllowed: a managed allowedMcpServers list is present
	// and no entry of it matches the server.
	ReasonPolicyNotAllowed = "policy_not_allowed"
)

// Matches reports whether m matches d AS WRITTEN: by name (d.Name), by
// command (a stdio definition whose Command followed by Args equals
// m.Command, and whose Env agrees with m.Env as MatchesMaterialized says
// for a deny entry), or by URL (an http, sse or ws definition whose URL
// matches the pattern m.URL; see ServerMatcher.URL). Templates are
// compared as text: this is what runs only for a definition without
// templates. Resolve uses it for those; what runs is matched by
// MatchesMaterialized. A nil d or a ServerMatcher with no field set
// matches nothing.
func (m ServerMatcher) Matches(d *Definition) bool {
	if d == nil {
		return false
	}
	return m.match(policyRun{name: d.Name, kind: d.Kind, command: d.Command, args: d.Args, env: d.Env, url: d.URL}, false)
}

// MatchesMaterialized reports whether m matches what md runs: its server
// id, its expanded command and args, its expanded env, its expanded URL.
// allow selects the reading of an allow-list entry, which must match the
// whole identity it claims; a deny-list entry matches whatever it does not
// state:
//   - Name: the server id.
//   - Command: a stdio definition whose command followed by its args
//     equals m.Command exactly; then, every key of m.Env must be set to
//     exactly that value; and for an allow entry, every key of the
//     definition's env that changes which code runs (CodeLoadingEnv:
//     PATH, PYTHONPATH, NODE_OPTIONS, LD_PRELOAD, npm_config_*, …) must be
//     one of m.Env's. An allow entry ignores the definition's other env
//     keys (credentials and settings) and its cwd; a deny entry ignores
//     every env key it does not name, and the cwd.
//   - URL: an http, sse or ws definition whose expanded URL matches the
//     pattern.
//
// A nil md matches nothing.
func (m ServerMatcher) MatchesMaterialized(md *Materialized, allow bool) bool {
	if md == nil || md.Def == nil {
		return false
	}
	r := policyRun{name: md.Def.Name, kind: md.Def.Kind, command: md.Command.Text, url: md.URL.Text}
	if md.Args != nil {
		r.args = make([]string, len(md.Args))
		for i, a := range md.Args {
			r.args[i] = a.Text
		}
	}
	if md.Env != nil {
		r.env = make(map[string]string, len(md.Env))
		for k, v := range md.Env {
			r.env[k] = v.Text
		}
	}
	return m.match(r, allow)
}

// policyRun is what a ServerMatcher looks at: expanded values, or values
// as written.
type policyRun struct {
	name, command, url string
	kind               Kind
	args               []string
	env                map[string]string
}

func (m ServerMatcher) match(r policyRun, allow bool) bool {
	switch {
	case m.Name != "":
		return r.name == m.Name
	case m.Command != nil:
		if r.kind != KindStdio || len(m.Command) != 1+len(r.args) || m.Command[0] != r.command {
			return false
		}
		for i, a := range r.args {
			if m.Command[i+1] != a {
				return false
			}
		}
		for k, want := range m.Env {
			if got, ok := r.env[k]; !ok || got != want {
				return false
			}
		}
		if allow {
			for k := range r.env {
				if _, stated := m.Env[k]; !stated && CodeLoadingEnv(k) {
					return false
				}
			}
		}
		return true
	case m.URL != "":
		return r.kind != KindStdio && URLPatternMatch(m.URL, r.url)
	}
	return false
}

// mayMatch reports whether m could match what d runs for some values of
// its variables: each template stands for any text. It is what Resolve's
// callers use when d cannot be materialized (its expansion is unknown):
// a deny entry that may match refuses it, fail closed.
func (m ServerMatcher) mayMatch(d *Definition) bool {
	switch {
	case m.Name != "":
		return d.Name == m.Name
	case m.Command != nil:
		if d.Kind != KindStdio || len(m.Command) != 1+len(d.Args) || !wildcardMatch(policyGlob(d.Command), m.Command[0], "") {
			return false
		}
		for i, a := range d.Args {
			if !wildcardMatch(policyGlob(a), m.Command[i+1], "") {
				return false
			}
		}
		for k, want := range m.Env {
			if got, ok := d.Env[k]; !ok || !wildcardMatch(policyGlob(got), want, "") {
				return false
			}
		}
		return true
	case m.URL != "":
		return d.Kind != KindStdio && globsMeet(m.URL, policyGlob(d.URL))
	}
	return false
}

// policyGlob returns s with every template (and everything after a
// malformed "${") replaced by "*", and every "*" of its literal text kept:
// a pattern any expansion of s matches. A literal "*" only widens it,
// which is the safe direction for mayMatch.
func policyGlob(s string) string {
	if !strings.Contains(s, "${") {
		return s
	}
	parts, bad := matParse(s)
	var b strings.Builder
	for _, p := range parts {
		if p.template {
			b.WriteByte('*')
		} else {
			b.WriteString(p.text)
		}
	}
	if bad >= 0 {
		b.WriteByte('*')
	}
	return b.String()
}

// globsMeet reports whether some text matches both patterns a and b, "*"
// in each matching any run of bytes. It takes at most len(a)*len(b)
// steps.
func globsMeet(a, b string) bool {
	memo := make(map[[2]int]bool)
	var f func(i, j int) bool
	f = func(i, j int) bool {
		key := [2]int{i, j}
		if v, ok := memo[key]; ok {
			return v
		}
		var r bool
		switch {
		case i == len(a) && j == len(b):
			r = true
		case i < len(a) && a[i] == '*':
			r = f(i+1, j) || j < len(b) && f(i, j+1)
		case j < len(b) && b[j] == '*':
			r = f(i, j+1) || i < len(a) && f(i+1, j)
		case i < len(a) && j < len(b):
			r = a[i] == b[j] && f(i+1, j+1)
		}
		memo[key] = r
		return r
	}
	return f(0, 0)
}

// CodeLoadingEnv reports whether an environment variable named key changes
// which code a program runs or loads, rather than only configuring it:
// the search path (PATH), the dynamic loader (LD_*, DYLD_*), interpreters
// and their package managers (PYTHON*, NODE_OPTIONS, NODE_PATH,
// npm_config_*, YARN_*, COREPACK_*, PIP_*, UV_*, RUBYOPT, RUBYLIB, GEM_*,
// BUNDLE_*, PERL*, JAVA_TOOL_OPTIONS, _JAVA_OPTIONS, JDK_JAVA_OPTIONS,
// JAVA_HOME, CLASSPATH, DOTNET_*, CORECLR_*, GOFLAGS, GOPATH, GOROOT,
// GOBIN, GOPROXY, GOTOOLCHAIN, GOENV, GOPRIVATE, GONOSUMDB, GOINSECURE),
// shells (BASH_ENV, ENV, ZDOTDIR, PROMPT_COMMAND), git and ssh helpers
// (GIT_SSH, GIT_SSH_COMMAND, GIT_EXEC_PATH, GIT_ASKPASS, GIT_CONFIG*,
// SSH_ASKPASS), other language toolchains (LUA_*, CARGO_*, RUSTUP_*,
// RUSTC*, DENO_*, BUN_*, PNPM_*, R_LIBS*, PHPRC, PHP_INI_SCAN_DIR,
// ELECTRON_RUN_AS_NODE), the C library's module path (GCONV_PATH) and
// where configuration files are read from (HOME, XDG_CONFIG_HOME: a
// .npmrc or pip.conf there names the registry). Keys
// compare case-insensitively. The approval review calls these out, and an
// allow-list entry matches a definition setting one only when it names it
// (see ServerMatcher.MatchesMaterialized).
func CodeLoadingEnv(key string) bool {
	k := strings.ToUpper(key)
	switch k {
	case "PATH", "NODE_OPTIONS", "NODE_PATH", "RUBYOPT", "RUBYLIB", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS",
		"JDK_JAVA_OPTIONS", "JAVA_HOME", "CLASSPATH", "GOFLAGS", "GOPATH", "GOROOT", "GOBIN", "GOPROXY",
		"GOTOOLCHAIN", "GOENV", "GOPRIVATE", "GONOSUMDB", "GOINSECURE", "BASH_ENV", "ENV", "ZDOTDIR",
		"PROMPT_COMMAND", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_EXEC_PATH", "GIT_ASKPASS", "SSH_ASKPASS",
		"HOME", "XDG_CONFIG_HOME", "GCONV_PATH", "PHPRC", "PHP_INI_SCAN_DIR", "ELECTRON_RUN_AS_NODE":
		return true
	}
	for _, p := range []string{"LD_", "DYLD_", "PYTHON", "NPM_CONFIG_", "YARN_", "COREPACK_", "PIP_", "UV_",
		"GEM_", "BUNDLE_", "PERL", "DOTNET_", "CORECLR_", "GIT_CONFIG", "LUA_", "CARGO_", "RUSTUP_", "RUSTC",
		"DENO_", "BUN_", "PNPM_", "R_LIBS"} {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// URLPatternMatch reports whether url matches pattern, where "*" is a
// wildcard. The pattern and the URL are each cut after their authority
// (the first "/" after "://", or the whole string): in the scheme and
// authority "*" matches any run of bytes other than "/", "?", "#" and
// "@", so a wildcard host cannot be stretched over another host, a path
// or a userinfo; in the rest it matches any run of bytes. Schemes and
// hosts are compared as written (exactly, case included).
func URLPatternMatch(pattern, url string) bool {
	pa, pr := urlSplitAuthority(pattern)
	ua, ur := urlSplitAuthority(url)
	if !wildcardMatch(pa, ua, "/?#@") {
		return false
	}
	if pr == "" {
		return ur == "" || ur == "/"
	}
	return wildcardMatch(pr, ur, "")
}

// urlSplitAuthority cuts s before the first "/", "?" or "#" after "://"
// (or after the start when there is no "://").
func urlSplitAuthority(s string) (string, string) {
	start := 0
	if i := strings.Index(s, "://"); i >= 0 {
		start = i + 3
	}
	if j := strings.IndexAny(s[start:], "/?#"); j >= 0 {
		return s[:start+j], s[start+j:]
	}
	return s, ""
}

// wildcardMatch reports whether s matches pattern, "*" matching any run
// of bytes none of which is in stop. It backtracks only to the last "*",
// so it takes at most len(pattern)*len(s) steps.
func wildcardMatch(pattern, s, stop string) bool {
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
		case star >= 0 && strings.IndexByte(stop, s[mark]) < 0:
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

// policyVerdict returns the refusal reason the managed policies give what
// a run matches (through match(allow) for each entry), "" when they let it
// run. Every policy's deny list is checked first; then every policy with
// an allow list must have an entry matching it (so two managed sources
// each narrow, never widen, what runs).
func policyVerdict(pols []*Policy, match func(m ServerMatcher, allow bool) bool) string {
	for _, p := range pols {
		for _, m := range p.Denied {
			if match(m, false) {
				return ReasonPolicyDenied
			}
		}
	}
	for _, p := range pols {
		if p.Allowed == nil {
			continue
		}
		if !slices.ContainsFunc(p.Allowed, func(m ServerMatcher) bool { return match(m, true) }) {
			return ReasonPolicyNotAllowed
		}
	}
	return ""
}

// PolicyVerdict returns the refusal reason (ReasonPolicyDenied or
// ReasonPolicyNotAllowed) the managed policies of r give what m runs —
// its expanded command, args, env and URL (see
// ServerMatcher.MatchesMaterialized) — or "" when they let it run or r
// has no policy. A host calls it for every server it materialized (Resolve
// could decide only the definitions without templates; see
// Server.PolicyPending), and again with the values it is about to run.
func (r Resolution) PolicyVerdict(m *Materialized) string {
	if len(r.policies) == 0 || m == nil {
		return ""
	}
	return policyVerdict(r.policies, func(sm ServerMatcher, allow bool) bool { return sm.MatchesMaterialized(m, allow) })
}

// PolicyVerdictUnexpanded returns the verdict of the managed policies of r
// on a definition whose templates cannot be expanded (a variable is unset
// or a template malformed), so what it would run is unknown: each template
// stands for any text. A deny entry that could match refuses it
// (ReasonPolicyDenied); allow lists none of whose entries could match it
// refuse it (ReasonPolicyNotAllowed); otherwise "" (undecided: it cannot
// run anyway until it materializes, and is then judged by PolicyVerdict).
func (r Resolution) PolicyVerdictUnexpanded(d *Definition) string {
	if len(r.policies) == 0 || d == nil {
		return ""
	}
	return policyVerdict(r.policies, func(sm ServerMatcher, _ bool) bool { return sm.mayMatch(d) })
}

// policyTemplated reports whether a field a ServerMatcher looks at holds a
// template in d (command, args, env values, url), so that matching it as
// written would not match what runs.
func policyTemplated(d *Definition) bool {
	has := func(s string) bool { return strings.Contains(s, "${") }
	if has(d.Command) || has(d.URL) || slices.ContainsFunc(d.Args, has) {
		return true
	}
	for _, v := range d.Env {
		if has(v) {
			return true
		}
	}
	return false
}
