package hostconfig

import (
	"maps"
	"slices"
)

// decodeCodex decodes Codex's config.toml: every [mcp_servers.NAME] table.
//
// Fields: command, args, env, env_vars (names of variables passed through:
// each becomes env NAME = ${NAME}), cwd; url, bearer_token_env_var
// (Authorization: Bearer ${VAR}), http_headers (literal values),
// env_http_headers (header → variable name: ${VAR}); tool_timeout_sec
// (our per-request "timeout", in milliseconds); startup_timeout_sec and
// startup_timeout_ms are dropped (the host's connect timeout applies to
// every server); enabled = false puts the server in the disable overlay;
// enabled_tools (the allow list) becomes "includeTools" and
// disabled_tools (applied after it in Codex too) "excludeTools"; a value
// that is not an array of tool names refuses the server (invalid_field).
// Codex expands no variables in values, so a literal "${" refuses the
// server (ReasonLiteralTemplate).
func decodeCodex(data []byte, _ Options) ([]imported, error) {
	root, err := parseTOML(data)
	if err != nil {
		return nil, err
	}
	servers, _ := lookup(root.members, "mcp_servers")
	switch {
	case servers == nil:
		return nil, nil
	case servers.kind != kObject:
		return nil, &MalformedError{Format: Codex, Reason: ReasonMalformedServers, Field: "mcp_servers"}
	}
	syn := syntaxOf(Codex, Options{})
	return eachServer(servers, func(s *imported, v *node) { decodeCodexEntry(syn, s, v) }), nil
}

func decodeCodexEntry(syn varSyntax, s *imported, v *node) {
	var tr transport
	var envVars []string
	for _, m := range v.members {
		if s.refused {
			return
		}
		codexField(syn, s, &tr, &envVars, m)
	}
	if s.refused {
		return
	}
	for _, name := range envVars {
		if _, dup := s.entry.Env[name]; dup {
			s.refuse("env_vars", ReasonDuplicateField)
			return
		}
		if s.entry.Env == nil {
			s.entry.Env = map[string]string{}
		}
		s.entry.Env[name] = "${" + name + "}"
	}
	kind, reason := resolveTransport(Codex, tr)
	if reason != "" {
		s.refuse("", reason)
		return
	}
	s.entry.Type = kind
}

// setHeader adds one header, refusing a repeated name (ignoring case).
func (s *imported) setHeader(field, name, value string) {
	if s.entry.Headers == nil {
		s.entry.Headers = map[string]string{}
	}
	for k := range s.entry.Headers {
		if equalFold(k, name) {
			s.refuse(field, ReasonDuplicateField)
			return
		}
	}
	s.entry.Headers[name] = value
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

func codexField(syn varSyntax, s *imported, tr *transport, envVars *[]string, m member) {
	v := m.val
	invalid := func() { s.refuse(m.key, ReasonInvalidField) }
	switch m.key {
	case "command":
		s.command(syn, tr, m)
	case "args":
		s.args(syn, m)
	case "env":
		env, ok := s.strMap(syn, m.key, v)
		if !ok {
			return
		}
		for k, val := range env {
			if s.entry.Env == nil {
				s.entry.Env = map[string]string{}
			}
			s.entry.Env[k] = val
		}
	case "env_vars":
		names, ok := asStrings(v)
		if !ok {
			invalid()
			return
		}
		for _, n := range names {
			if !isName(n) {
				invalid()
				return
			}
		}
		*envVars = names
	case "cwd":
		if v.kind != kString {
			invalid()
			return
		}
		s.entry.Cwd, _ = s.str(syn, m.key, v.str)
	case "url":
		if v.kind != kString || v.str == "" {
			invalid()
			return
		}
		tr.url++
		s.entry.URL, _ = s.str(syn, m.key, v.str)
	case "bearer_token_env_var":
		if v.kind != kString || !isName(v.str) {
			invalid()
			return
		}
		s.setHeader(m.key, "Authorization", "Bearer ${"+v.str+"}")
	case "http_headers":
		h, ok := s.strMap(syn, m.key, v)
		if !ok {
			return
		}
		for _, k := range sortedKeys(h) {
			s.setHeader(m.key, k, h[k])
		}
	case "env_http_headers":
		h, ok, _ := asStringMap(v)
		if !ok {
			invalid()
			return
		}
		for _, k := range sortedKeys(h) {
			if !isName(h[k]) {
				invalid()
				return
			}
			s.setHeader(m.key, k, "${"+h[k]+"}")
		}
	case "enabled_tools", "disabled_tools":
		s.setToolFilter(m.key, m.key == "enabled_tools", v)
	case "startup_timeout_sec", "startup_timeout_ms":
		if v.kind != kNumber {
			invalid()
			return
		}
		s.drop(m.key, ReasonStartupTimeout)
	case "tool_timeout_sec":
		ms, ok := asSecondsMS(v, maxTimeoutMS)
		if !ok {
			invalid()
			return
		}
		s.entry.Timeout = ms
	case "enabled":
		if v.kind != kBool {
			invalid()
			return
		}
		s.disabled = !v.b
	default:
		s.refuse(printable(m.key), ReasonUnknownField)
	}
}

func sortedKeys(m map[string]string) []string {
	return slices.Sorted(maps.Keys(m))
}
