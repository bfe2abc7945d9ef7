package hostconfig

import (
	"slices"
	"strings"

	"github.com/mcpward/mcpward/core/refusal"
)

// maxTimeoutMS is the largest request timeout our format accepts (one day,
// as core/definition decodes "timeout").
const maxTimeoutMS = 24 * 60 * 60 * 1000

// The fields each JSON format documents for a server entry. Every format
// also accepts the fields people copy between hosts (copiedFields), so
// that such a file imports with them reported rather than refused.
var jsonFields = map[Format][]string{
	// Claude Code: ~/.claude.json entries, as "claude mcp add" writes them.
	ClaudeCode: {"type", "command", "args", "env", "url", "headers", "headersHelper", "oauth"},
	// Claude Desktop: local stdio servers only.
	ClaudeDesktop: {"type", "command", "args", "env"},
	// Cursor: stdio (command, args, env, envFile) or remote (url, headers,
	// auth: static OAuth client).
	Cursor: {"type", "command", "args", "env", "envFile", "url", "headers", "auth"},
	// VS Code: .vscode/mcp.json "servers" entries.
	VSCode: {"type", "command", "args", "env", "envFile", "cwd", "url", "headers", "dev", "sandbox", "sandboxEnabled", "gallery", "version"},
	// Gemini CLI: settings.json "mcpServers" entries.
	Gemini: {"type", "command", "args", "env", "cwd", "url", "httpUrl", "headers", "timeout", "trust", "includeTools", "excludeTools", "description", "oauth", "authProviderType", "targetAudience", "targetServiceAccount", "extensionName"},
}

// copiedFields are keys found in configurations copied from other hosts
// (Cline, Roo, Windsurf and the like): each is handled in every JSON format.
var copiedFields = []string{"disabled", "autoApprove", "alwaysAllow", "trust", "timeout"}

// decodeJSONFormat decodes the JSON formats.
func decodeJSONFormat(format Format, data []byte, opts Options) ([]imported, error) {
	if format == VSCode || format == Gemini {
		data = stripJSONC(data)
	}
	root, err := parseJSON(format, data)
	if err != nil {
		return nil, err
	}
	docErr := func(reason, field string, at *node) error {
		e := &MalformedError{Format: format, Reason: reason, Field: field}
		if at != nil {
			e.Line, e.Column = lineCol(data, at.off)
		}
		return e
	}
	if root.kind != kObject {
		return nil, docErr(ReasonMalformedRoot, "", root)
	}
	container := root
	if format == ClaudeCode && opts.Local {
		if opts.Workspace == "" {
			return nil, &refusal.Error{Class: refusal.Config, Reason: ReasonWorkspaceUnknown}
		}
		projects, dup := lookup(root.members, "projects")
		switch {
		case dup:
			return nil, docErr(ReasonMalformedDocument, "projects", projects)
		case projects == nil:
			return nil, nil
		case projects.kind != kObject:
			return nil, docErr(ReasonMalformedServers, "projects", projects)
		}
		proj, dup := lookup(projects.members, opts.Workspace)
		switch {
		case dup:
			return nil, docErr(ReasonMalformedDocument, "projects", proj)
		case proj == nil:
			return nil, nil
		case proj.kind != kObject:
			return nil, docErr(ReasonMalformedServers, "projects", proj)
		}
		container = proj
	}
	key := "mcpServers"
	if format == VSCode {
		key = "servers"
	}
	servers, dup := lookup(container.members, key)
	switch {
	case dup:
		return nil, docErr(ReasonMalformedDocument, key, servers)
	case servers == nil:
		return nil, nil
	case servers.kind != kObject:
		return nil, docErr(ReasonMalformedServers, key, servers)
	}
	syn := syntaxOf(format, opts)
	return eachServer(servers, func(s *imported, v *node) { decodeJSONEntry(format, syn, s, v) }), nil
}

// eachServer decodes every member of a servers object, sorted by name: a
// repeated or invalid name is refused, every other entry goes to entry.
func eachServer(servers *node, entry func(*imported, *node)) []imported {
	count := map[string]int{}
	for _, m := range servers.members {
		count[m.key]++
	}
	members := slices.Clone(servers.members)
	slices.SortStableFunc(members, func(a, b member) int { return strings.Compare(a.key, b.key) })
	var out []imported
	for i, m := range members {
		if i > 0 && members[i-1].key == m.key {
			continue
		}
		s := imported{name: printable(m.key)}
		switch {
		case count[m.key] > 1:
			s.refuse("", ReasonDuplicateName)
		case !validName(m.key):
			s.refuse("", ReasonInvalidName)
		case m.val.kind != kObject:
			s.refuse("", ReasonNotObject)
		default:
			if k, dup := duplicateKey(m.val.members); dup {
				s.refuse(printable(k), ReasonDuplicateField)
			} else {
				entry(&s, m.val)
			}
		}
		out = append(out, s)
	}
	return out
}

// str translates one string value of field, refusing the server when it
// cannot be carried over.
func (s *imported) str(syn varSyntax, field, v string) (string, bool) {
	out, reason := syn.translate(v)
	if reason != "" {
		s.refuse(field, reason)
		return "", false
	}
	return out, true
}

// strMap translates every value of an object of strings.
func (s *imported) strMap(syn varSyntax, field string, v *node) (map[string]string, bool) {
	m, ok, dup := asStringMap(v)
	if dup {
		s.refuse(field, ReasonDuplicateField)
		return nil, false
	}
	if !ok {
		s.refuse(field, ReasonInvalidField)
		return nil, false
	}
	for k, val := range m {
		t, ok := s.str(syn, field, val)
		if !ok {
			return nil, false
		}
		m[k] = t
	}
	return m, true
}

// setToolFilter sets the include (else the exclude) tool filter from v,
// the value of field, refusing the server (ReasonInvalidField) when v is
// not an array of tool names (see asToolNames).
func (s *imported) setToolFilter(field string, include bool, v *node) {
	names, ok := asToolNames(v)
	switch {
	case !ok:
		s.refuse(field, ReasonInvalidField)
	case include:
		s.entry.IncludeTools = names
	default:
		s.entry.ExcludeTools = names
	}
}

// transport is what an entry's fields said about its transport.
type transport struct {
	typ     string // the "type" value, "" if absent
	command bool
	url     int // how many URL fields
	httpURL bool
	typeAt  bool
}

// decodeJSONEntry decodes one entry of a JSON format into s.
func decodeJSONEntry(format Format, syn varSyntax, s *imported, v *node) {
	var tr transport
	for _, m := range v.members {
		if s.refused {
			return
		}
		if !slices.Contains(jsonFields[format], m.key) && !slices.Contains(copiedFields, m.key) {
			s.refuse(printable(m.key), ReasonUnknownField)
			return
		}
		jsonField(format, syn, s, &tr, m)
	}
	if s.refused {
		return
	}
	kind, reason := resolveTransport(format, tr)
	if reason != "" {
		s.refuse("type", reason)
		return
	}
	s.entry.Type = kind
}

// resolveTransport decides an entry's transport from its fields.
func resolveTransport(format Format, tr transport) (string, string) {
	if tr.command && tr.url > 0 || tr.url > 1 {
		return "", ReasonAmbiguousTransport
	}
	switch tr.typ {
	case "":
	case "stdio":
		if !tr.command {
			return "", ReasonMissingTransport
		}
		return "stdio", ""
	case "http", "streamable-http", "streamableHttp":
		if tr.url == 0 {
			return "", ReasonMissingTransport
		}
		return "http", ""
	case "sse":
		return "", ReasonTransportSSE
	default:
		return "", ReasonUnknownType
	}
	switch {
	case tr.command:
		return "stdio", ""
	case tr.httpURL:
		return "http", ""
	case tr.url > 0 && format == Gemini:
		// Gemini CLI's "url" without a type is the SSE transport.
		return "", ReasonTransportSSE
	case tr.url > 0:
		return "http", ""
	}
	return "", ReasonMissingTransport
}

// jsonField decodes one member of a JSON format's entry.
func jsonField(format Format, syn varSyntax, s *imported, tr *transport, m member) {
	v := m.val
	invalid := func() { s.refuse(m.key, ReasonInvalidField) }
	switch m.key {
	case "type":
		if v.kind != kString {
			invalid()
			return
		}
		tr.typ = v.str
	case "command":
		s.command(syn, tr, m)
	case "args":
		s.args(syn, m)
	case "env":
		s.entry.Env, _ = s.strMap(syn, m.key, v)
	case "cwd":
		if v.kind != kString {
			invalid()
			return
		}
		s.entry.Cwd, _ = s.str(syn, m.key, v.str)
	case "url", "httpUrl":
		if v.kind != kString || v.str == "" {
			invalid()
			return
		}
		tr.url++
		tr.httpURL = tr.httpURL || m.key == "httpUrl"
		s.entry.URL, _ = s.str(syn, m.key, v.str)
	case "headers":
		s.entry.Headers, _ = s.strMap(syn, m.key, v)
	case "headersHelper":
		if v.kind == kString {
			// Claude Code runs it through a shell; our format takes only an
			// exact argv.
			s.refuse(m.key, "headers_helper_not_argv")
			return
		}
		argv, ok := asStrings(v)
		if !ok {
			invalid()
			return
		}
		s.entry.HeadersHelper = argv
	case "oauth":
		if format == Gemini {
			s.refuse(m.key, ReasonOAuthUnsupported)
			return
		}
		oauthField(s, m.key, v, map[string]string{"clientId": "clientId", "callbackPort": "callbackPort", "authServerMetadataUrl": "authServerMetadataUrl", "scopes": "scopes"}, "clientSecret")
	case "auth":
		oauthField(s, m.key, v, map[string]string{"CLIENT_ID": "clientId", "scopes": "scopes"}, "CLIENT_SECRET")
	case "authProviderType", "targetAudience", "targetServiceAccount":
		s.refuse(m.key, ReasonOAuthUnsupported)
	case "envFile":
		s.refuse(m.key, ReasonEnvFile)
	case "includeTools", "excludeTools":
		// Only Gemini CLI documents them (jsonFields): elsewhere they are
		// an unknown field, refused before this point.
		s.setToolFilter(m.key, m.key == "includeTools", v)
	case "sandbox":
		s.refuse(m.key, ReasonSandbox)
	case "sandboxEnabled":
		if v.kind != kBool {
			invalid()
		} else if v.b {
			s.refuse(m.key, ReasonSandbox)
		}
	case "timeout":
		if format != Gemini {
			s.drop(m.key, ReasonTimeoutUnitUnknown)
			return
		}
		ms, ok := asPositiveInt(v, maxTimeoutMS)
		if !ok {
			invalid()
			return
		}
		s.entry.Timeout = ms
	case "trust", "autoApprove", "alwaysAllow":
		s.drop(m.key, ReasonGrantNotHonoured)
	case "disabled":
		if v.kind != kBool {
			invalid()
			return
		}
		s.disabled = v.b
	case "description", "gallery", "version", "extensionName":
		s.drop(m.key, ReasonInformational)
	case "dev":
		s.drop(m.key, ReasonDevMode)
	default:
		s.refuse(printable(m.key), ReasonUnknownField)
	}
}

// oauthField maps an OAuth client object: names maps the source's keys to
// ours; secret is the source's client-secret key, which refuses the server.
func oauthField(s *imported, field string, v *node, names map[string]string, secret string) {
	if v.kind != kObject {
		s.refuse(field, ReasonInvalidField)
		return
	}
	if k, dup := duplicateKey(v.members); dup {
		s.refuse(field+"."+printable(k), ReasonDuplicateField)
		return
	}
	o := &outOAuth{}
	for _, m := range v.members {
		sub := field + "." + printable(m.key)
		if m.key == secret {
			s.refuse(sub, ReasonClientSecret)
			return
		}
		switch names[m.key] {
		case "clientId":
			if m.val.kind != kString {
				s.refuse(sub, ReasonInvalidField)
				return
			}
			o.ClientID = m.val.str
		case "authServerMetadataUrl":
			if m.val.kind != kString {
				s.refuse(sub, ReasonInvalidField)
				return
			}
			o.AuthServerMetadataURL = m.val.str
		case "scopes":
			scopes, ok := asStrings(m.val)
			if !ok {
				s.refuse(sub, ReasonInvalidField)
				return
			}
			o.Scopes = scopes
		case "callbackPort":
			port, ok := asPositiveInt(m.val, 65535)
			if !ok {
				s.refuse(sub, ReasonInvalidField)
				return
			}
			o.CallbackPort = int(port)
		default:
			s.refuse(sub, ReasonUnknownField)
			return
		}
	}
	s.entry.OAuth = o
}

// command maps a "command" member m: a non-empty string, with the format's
// variables (syn) mapped; anything else refuses the server by name.
func (s *imported) command(syn varSyntax, tr *transport, m member) {
	if m.val.kind != kString || m.val.str == "" {
		s.refuse(m.key, ReasonInvalidField)
		return
	}
	tr.command = true
	s.entry.Command, _ = s.str(syn, m.key, m.val.str)
}

// args maps an "args" member m: an array of strings, each with the
// format's variables (syn) mapped; anything else refuses the server by
// name.
func (s *imported) args(syn varSyntax, m member) {
	args, ok := asStrings(m.val)
	if !ok {
		s.refuse(m.key, ReasonInvalidField)
		return
	}
	for i, a := range args {
		if args[i], ok = s.str(syn, m.key, a); !ok {
			return
		}
	}
	s.entry.Args = args
}
