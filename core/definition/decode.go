package definition

import (
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcpward/mcpward/ports"
)

// The entry problem words Decode puts in Entry.Problem. Each is a stable
// lower_snake_case word; Entry.Field names the schema field it concerns
// when one applies.
const (
	// EntryDuplicateName: the server name occurs more than once under
	// mcpServers. Every occurrence collapses into this one malformed entry.
	EntryDuplicateName = "duplicate_name"
	// EntryInvalidName: the server name is empty, longer than 64 bytes, or
	// holds a byte outside [A-Za-z0-9_.-].
	EntryInvalidName = "invalid_name"
	// EntryNotObject: the entry is not a JSON object.
	EntryNotObject = "entry_not_object"
	// EntryDuplicateField: a key occurs twice in the entry (or in one of its
	// objects; for headers, twice ignoring ASCII case).
	EntryDuplicateField = "duplicate_field"
	// EntryMissingType: no "type", and neither "command" nor "url" to infer
	// one from.
	EntryMissingType = "missing_type"
	// EntryUnknownType: "type" is a string naming no known transport.
	EntryUnknownType = "unknown_type"
	// EntryUnknownField: the entry holds a key outside the schema.
	EntryUnknownField = "unknown_field"
	// EntryFieldNotForTransport: the entry holds a field of the other
	// transport (for example "url" on a stdio entry).
	EntryFieldNotForTransport = "field_not_for_transport"
	// EntryInvalidField: a known field has the wrong JSON type or an
	// unacceptable value (empty where a value is required, a NUL byte, a
	// port out of range, an invalid header name).
	EntryInvalidField = "invalid_field"
	// EntryMissingCommand: a stdio entry has no "command".
	EntryMissingCommand = "missing_command"
	// EntryMissingURL: an http, sse or ws entry has no "url".
	EntryMissingURL = "missing_url"
)

// The refusal words Decode puts in Definition.Refusal. A refused definition
// is well-formed, wins precedence and stays listed, but never connects.
// When several apply, the first in this list is kept.
const (
	// RefusalTransportSSE: "type" is "sse" (deprecated HTTP+SSE).
	RefusalTransportSSE = "transport_sse_refused"
	// RefusalTransportWS: "type" is "ws" (custom WebSocket).
	RefusalTransportWS = "transport_ws_refused"
	// RefusalOAuthClientSecret: "oauth" holds a "clientSecret". Its value
	// is not kept.
	RefusalOAuthClientSecret = "oauth_client_secret_in_definition"
	// RefusalHeadersHelperNotArgv: "headersHelper" is a string (a shell
	// line) instead of an exact argv. The string is not kept.
	RefusalHeadersHelperNotArgv = "headers_helper_not_argv"
	// RefusalSecretInCommand, RefusalSecretInCwd and RefusalSecretInURL
	// (target.go) come last: a secret decides what runs or where it
	// connects.
)

// The root keys Decode reads. Every other root key is ignored, because
// hosts keep other settings beside them.
const (
	decodeKeyServers  = "mcpServers"
	decodeKeyDisabled = "disabledMcpServers"
	// The managed policy keys, read only from a managed source.
	decodeKeyAllowed     = "allowedMcpServers"
	decodeKeyDenied      = "deniedMcpServers"
	decodeKeyDeniedTools = "deniedTools"
)

// decodeMaxNameLen is the longest valid server name, in bytes.
const decodeMaxNameLen = 64

// decodeMaxDepth bounds nesting, as encoding/json's scanner does.
const decodeMaxDepth = 10000

// Decode decodes one source in the de-facto "mcpServers" shape
//
//	{"mcpServers": {"<name>": {...}}, "disabledMcpServers": ["<name>", ...]}
//
// It never fails and never panics: every problem is reported in the
// returned Document, which always carries src's Tier and Origin.
//
// Source problems (Document.Problem):
//   - src.ReadErr != nil: ProblemUnreadable (the error's text is not kept).
//   - the bytes are not exactly one JSON value, are not valid UTF-8 (JSON
//     text is UTF-8, and encoding/json would otherwise silently replace
//     the bad bytes), are empty, nest deeper than 10000, or hold the root
//     key "mcpServers" twice: ProblemMalformedDocument. A byte-order mark
//     is not JSON and is malformed too.
//   - the value is not an object: ProblemMalformedRoot.
//   - "mcpServers" is present but not an object (null included):
//     ProblemMalformedServers.
//
// With any of these the Document has no Entries and no Disabled.
// "mcpServers" absent means no entries and no problem. When
// "disabledMcpServers" is present but is not an array of strings, or
// occurs twice, the problem is ProblemMalformedOverlay, Disabled is empty
// (an overlay is used whole or not at all) and the entries are still
// decoded. In a managed source only, "allowedMcpServers",
// "deniedMcpServers" and "deniedTools" are the MCP policy (Document.Policy,
// see decodePolicy for their shape); one present but malformed or
// repeated is ProblemMalformedPolicy (unless the overlay already gave a
// problem), the entries still decoded, Disabled and Policy empty. A
// well-formed policy is kept even when the overlay is malformed, so the
// document's own servers stay bound by it. Other root keys, and the policy
// keys of every other tier, are ignored.
//
// Keys are compared exactly, never case-insensitively ("URL" is not "url"),
// and a repeated key is never silently resolved to one of its values.
//
// Every key of mcpServers yields exactly one Entry, sorted by name: a
// Definition when the entry is well-formed, otherwise Def is nil and
// Problem (one of the Entry* words) and, when one applies, Field are set,
// so the malformed entry still shadows its name in Resolve. When an entry
// has several problems the first found is reported, checking the name,
// then the entry's shape, duplicate keys, the type, then each key in
// document order, then required fields.
//
// A valid name is 1 to 64 bytes of [A-Za-z0-9_.-] and is kept as is. Any
// other name is malformed (EntryInvalidName) and is kept in the form
// strconv.QuoteToASCII gives it: printable ASCII, starting with a double
// quote so it never equals a valid name, and distinct for distinct names.
// Names in Disabled are kept the same way, so they match Entry.Name.
//
// Entry fields (exact case); a field of the other transport is
// EntryFieldNotForTransport, a key outside the schema is EntryUnknownField
// (fail closed: an unknown key such as "shell" or "disabled" may change
// what the entry means to the host that wrote it), and null is never taken
// for absence:
//   - "type": "stdio", "http", "sse" or "ws"; absent, it is inferred as
//     stdio from "command", else http from "url", else EntryMissingType.
//   - stdio: "command" (required, non-empty string), "args" (array of
//     strings), "env" (object of strings, keys non-empty without "="),
//     "cwd" (string, "" meaning absent). No stdio string may hold NUL.
//   - http, sse, ws: "url" (required, non-empty string), "headers" (object
//     of strings, keys HTTP tokens distinct ignoring case, values without
//     CR, LF or NUL), "headersHelper" (non-empty array of non-empty
//     strings; a string is RefusalHeadersHelperNotArgv), "oauth" (object:
//     "clientId" string, "scopes" array of strings, "callbackPort" integer
//     literal 1-65535, "authServerMetadataUrl" string, "clientMetadataUrl"
//     string; "clientSecret" of
//     any JSON type is RefusalOAuthClientSecret).
//   - both: "requiresTrustedWorkspace" (bool); "timeout" (an integer
//     literal of milliseconds, 1 to 86400000, the name and unit Gemini CLI
//     uses; Definition.Timeout); "includeTools" and "excludeTools" (arrays
//     of non-empty tool names without NUL, the server's own names; kept
//     sorted and de-duplicated, see Definition.IncludeTools).
//
// An sse or ws entry is validated as an http entry and, when well-formed,
// is a Definition refused by name (RefusalTransportSSE, RefusalTransportWS).
// A well-formed entry whose command or cwd holds a secret template, or
// whose url's scheme, host or port does, is refused by name too
// (RefusalSecretInCommand, RefusalSecretInCwd, RefusalSecretInURL).
//
// No Problem, Field or Name ever holds a value from the document: Field is
// a schema field name ("oauth.callbackPort"), or for EntryUnknownField and
// EntryDuplicateField the offending key itself (a key, never a value), kept
// as is when it looks like a name and otherwise quoted as above and cut to
// 64 bytes. Decode is deterministic: the same Source yields an equal
// Document.
func Decode(src Source) Document {
	doc := Document{Tier: src.Tier, Origin: src.Origin}
	fail := func(kind ProblemKind) Document {
		doc.Problem = &SourceProblem{Tier: src.Tier, Origin: src.Origin, Kind: kind}
		return doc
	}
	if src.ReadErr != nil {
		return fail(ProblemUnreadable)
	}
	root, ok := decodeParse(src.Data)
	if !ok {
		return fail(ProblemMalformedDocument)
	}
	if root.kind != decodeObject {
		return fail(ProblemMalformedRoot)
	}
	var servers, disabled *decodeValue
	nServers, nDisabled := 0, 0
	for _, m := range root.members {
		switch m.key {
		case decodeKeyServers:
			servers = m.val
			nServers++
		case decodeKeyDisabled:
			disabled = m.val
			nDisabled++
		}
	}
	if nServers > 1 {
		return fail(ProblemMalformedDocument)
	}
	if servers != nil && servers.kind != decodeObject {
		return fail(ProblemMalformedServers)
	}
	if servers != nil {
		doc.Entries = decodeEntries(src, servers)
	}
	if disabled != nil {
		names, ok := decodeOverlay(disabled)
		if !ok || nDisabled > 1 {
			doc.Problem = &SourceProblem{Tier: src.Tier, Origin: src.Origin, Kind: ProblemMalformedOverlay}
		} else {
			doc.Disabled = names
		}
	}
	if src.Tier == ports.TierManaged {
		pol, ok := decodePolicy(root.members)
		switch {
		case !ok:
			if doc.Problem == nil {
				doc.Problem = &SourceProblem{Tier: src.Tier, Origin: src.Origin, Kind: ProblemMalformedPolicy}
			}
			// A document with a problem has no overlay (Resolve would not
			// use it either).
			doc.Disabled = nil
		default:
			doc.Policy = pol
		}
	}
	return doc
}

// decodePolicy reads a managed source's policy keys: nil when none is
// present, false when one is malformed or repeated.
//
//   - "allowedMcpServers", "deniedMcpServers": arrays of objects, each with
//     exactly one of "serverName" (a valid server name), "serverCommand"
//     (a non-empty array of strings, the first non-empty, none holding
//     NUL) or "serverUrl" (a non-empty string without NUL), and, beside
//     "serverCommand" only, an optional "serverEnv" (an object of strings,
//     keys non-empty without "=", no NUL); any other key is malformed.
//   - "deniedTools": an array of non-empty strings without NUL.
func decodePolicy(members []decodeMember) (*Policy, bool) {
	var pol Policy
	seen := map[string]bool{}
	for _, m := range members {
		switch m.key {
		case decodeKeyAllowed, decodeKeyDenied, decodeKeyDeniedTools:
		default:
			continue
		}
		if seen[m.key] {
			return nil, false
		}
		seen[m.key] = true
		switch m.key {
		case decodeKeyDeniedTools:
			pats, ok := decodeToolNames(m.val)
			if !ok {
				return nil, false
			}
			pol.DeniedTools = pats
		default:
			list, ok := decodeMatchers(m.val)
			if !ok {
				return nil, false
			}
			if m.key == decodeKeyAllowed {
				pol.Allowed = list
			} else {
				pol.Denied = list
			}
		}
	}
	if len(seen) == 0 {
		return nil, true
	}
	return &pol, true
}

// decodeMatchers reads an allowedMcpServers or deniedMcpServers array,
// non-nil when well-formed.
func decodeMatchers(v *decodeValue) ([]ServerMatcher, bool) {
	if v.kind != decodeArray {
		return nil, false
	}
	out := make([]ServerMatcher, 0, len(v.elems))
	for _, e := range v.elems {
		if e.kind != decodeObject || len(e.members) == 0 || len(e.members) > 2 {
			return nil, false
		}
		var sm ServerMatcher
		m := e.members[0]
		if len(e.members) == 2 {
			// "serverEnv" beside "serverCommand", in either order.
			envM := e.members[1]
			if m.key == "serverEnv" {
				m, envM = envM, m
			}
			if m.key != "serverCommand" || envM.key != "serverEnv" || envM.val.kind != decodeObject {
				return nil, false
			}
			if _, dup := decodeDuplicateKey(envM.val.members, false); dup {
				return nil, false
			}
			sm.Env = make(map[string]string, len(envM.val.members))
			for _, kv := range envM.val.members {
				if kv.val.kind != decodeString || kv.key == "" || strings.ContainsAny(kv.key, "=\x00") ||
					strings.IndexByte(kv.val.str, 0) >= 0 {
					return nil, false
				}
				sm.Env[kv.key] = kv.val.str
			}
		}
		switch m.key {
		case "serverName":
			if m.val.kind != decodeString || !decodeValidName(m.val.str) {
				return nil, false
			}
			sm.Name = m.val.str
		case "serverCommand":
			argv, ok := decodeStrings(m.val, false)
			if !ok || len(argv) == 0 || argv[0] == "" {
				return nil, false
			}
			for _, a := range argv {
				if strings.IndexByte(a, 0) >= 0 {
					return nil, false
				}
			}
			sm.Command = argv
		case "serverUrl":
			if m.val.kind != decodeString || m.val.str == "" || strings.IndexByte(m.val.str, 0) >= 0 {
				return nil, false
			}
			sm.URL = m.val.str
		default:
			return nil, false
		}
		out = append(out, sm)
	}
	return out, true
}

// decodeEntries decodes every member of the mcpServers object into one
// Entry per distinct name, sorted by name.
func decodeEntries(src Source, servers *decodeValue) []Entry {
	// Order a copy of the members by key, so a run of equal keys is a
	// duplicated name, decided once per distinct key. The entries are then
	// sorted by their kept names (distinct, since the kept form is
	// injective), which may order differently from the raw keys.
	members := slices.Clone(servers.members)
	slices.SortStableFunc(members, func(a, b decodeMember) int { return strings.Compare(a.key, b.key) })
	entries := make([]Entry, 0, len(members))
	for i := 0; i < len(members); {
		m := members[i]
		j := i + 1
		for j < len(members) && members[j].key == m.key {
			j++
		}
		name := decodeServerName(m.key)
		switch {
		case j-i > 1:
			entries = append(entries, Entry{Name: name, Problem: EntryDuplicateName})
		case name != m.key:
			entries = append(entries, Entry{Name: name, Problem: EntryInvalidName})
		default:
			entries = append(entries, decodeEntry(src, m.key, m.val))
		}
		i = j
	}
	slices.SortFunc(entries, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	return entries
}

// decodeOverlay reads disabledMcpServers: an array of strings, returned as
// sorted, de-duplicated server names.
func decodeOverlay(v *decodeValue) ([]string, bool) {
	if v.kind != decodeArray {
		return nil, false
	}
	names := make([]string, 0, len(v.elems))
	for _, e := range v.elems {
		if e.kind != decodeString {
			return nil, false
		}
		names = append(names, decodeServerName(e.str))
	}
	slices.Sort(names)
	out := names[:0]
	for i, n := range names {
		if i == 0 || n != names[i-1] {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return nil, true
	}
	return out, true
}

// decodeValidName reports whether s is a valid server name.
func decodeValidName(s string) bool {
	if s == "" || len(s) > decodeMaxNameLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// decodeServerName returns the form a server name is kept in: itself when
// valid, else its ASCII-quoted form (injective, printable, and never a
// valid name since it starts with a double quote).
func decodeServerName(s string) string {
	if decodeValidName(s) {
		return s
	}
	return strconv.QuoteToASCII(s)
}

// decodeFieldName returns the printable form of a key that is not in the
// schema: itself when it looks like a name, else its ASCII-quoted form of
// at most 64 bytes of the key.
func decodeFieldName(key string) string {
	if decodeValidName(key) {
		return key
	}
	cut := key
	if len(cut) > decodeMaxNameLen {
		n := decodeMaxNameLen
		for n > 0 && !utf8.RuneStart(cut[n]) {
			n--
		}
		cut = cut[:n]
		return strconv.QuoteToASCII(cut) + "..."
	}
	return strconv.QuoteToASCII(cut)
}

// decodeIsStdioField and decodeIsHTTPField report whether key is a
// transport-specific field; "type" and "requiresTrustedWorkspace" belong
// to both.
func decodeIsStdioField(key string) bool {
	switch key {
	case "command", "args", "env", "cwd":
		return true
	}
	return false
}

func decodeIsHTTPField(key string) bool {
	switch key {
	case "url", "headers", "headersHelper", "oauth":
		return true
	}
	return false
}

// decodeLookup returns the value of the member named key, or nil. The
// members' keys are known to be distinct.
func decodeLookup(members []decodeMember, key string) *decodeValue {
	for _, m := range members {
		if m.key == key {
			return m.val
		}
	}
	return nil
}

// decodeEntryState carries what decoding one entry found besides the
// Definition: the refusals seen.
type decodeEntryState struct {
	clientSecret  bool
	helperIsShell bool
}

// decodeEntry decodes one entry whose name is valid and unique.
func decodeEntry(src Source, name string, v *decodeValue) Entry {
	bad := func(problem, field string) Entry {
		return Entry{Name: name, Problem: problem, Field: field}
	}
	if v.kind != decodeObject {
		return bad(EntryNotObject, "")
	}
	if key, dup := decodeDuplicateKey(v.members, false); dup {
		return bad(EntryDuplicateField, decodeFieldName(key))
	}
	var kind Kind
	if t := decodeLookup(v.members, "type"); t != nil {
		if t.kind != decodeString {
			return bad(EntryInvalidField, "type")
		}
		switch k := Kind(t.str); k {
		case KindStdio, KindHTTP, KindSSE, KindWS:
			kind = k
		default:
			return bad(EntryUnknownType, "type")
		}
	} else if decodeLookup(v.members, "command") != nil {
		kind = KindStdio
	} else if decodeLookup(v.members, "url") != nil {
		kind = KindHTTP
	} else {
		return bad(EntryMissingType, "type")
	}

	def := &Definition{Name: name, Tier: src.Tier, Origin: src.Origin, Kind: kind}
	var st decodeEntryState
	for _, m := range v.members {
		var problem, field string
		switch {
		case m.key == "type":
			continue
		case m.key == "requiresTrustedWorkspace":
			if m.val.kind != decodeBool {
				problem, field = EntryInvalidField, m.key
			}
			def.RequiresTrustedWorkspace = m.val.b
		case m.key == "timeout":
			ms, ok := decodeTimeout(m.val)
			if !ok {
				problem, field = EntryInvalidField, m.key
			}
			def.Timeout = time.Duration(ms) * time.Millisecond
		case m.key == "includeTools" || m.key == "excludeTools":
			names, ok := decodeToolNames(m.val)
			if !ok {
				problem, field = EntryInvalidField, m.key
			} else if m.key == "includeTools" {
				def.IncludeTools = names
			} else {
				def.ExcludeTools = names
			}
		case kind == KindStdio && decodeIsStdioField(m.key):
			problem, field = decodeStdioField(def, m)
		case kind != KindStdio && decodeIsHTTPField(m.key):
			problem, field = decodeHTTPField(def, m, &st)
		case decodeIsStdioField(m.key) || decodeIsHTTPField(m.key):
			problem, field = EntryFieldNotForTransport, m.key
		default:
			problem, field = EntryUnknownField, decodeFieldName(m.key)
		}
		if problem != "" {
			return bad(problem, field)
		}
	}

	if kind == KindStdio {
		if decodeLookup(v.members, "command") == nil {
			return bad(EntryMissingCommand, "command")
		}
	} else if decodeLookup(v.members, "url") == nil {
		return bad(EntryMissingURL, "url")
	}

	switch {
	case kind == KindSSE:
		def.Refusal = RefusalTransportSSE
	case kind == KindWS:
		def.Refusal = RefusalTransportWS
	case st.clientSecret:
		def.Refusal = RefusalOAuthClientSecret
	case st.helperIsShell:
		def.Refusal = RefusalHeadersHelperNotArgv
	default:
		def.Refusal = targetRefusal(def)
	}
	return Entry{Name: name, Def: def}
}

// decodeMaxTimeoutMS is the largest "timeout" accepted: one day.
const decodeMaxTimeoutMS = 24 * 60 * 60 * 1000

// decodeTimeout reads "timeout": an integer literal (no fraction, no
// exponent) of milliseconds in [1, decodeMaxTimeoutMS].
func decodeTimeout(v *decodeValue) (int64, bool) {
	if v.kind != decodeNumber {
		return 0, false
	}
	ms, err := strconv.ParseInt(v.str, 10, 64)
	if err != nil || ms < 1 || ms > decodeMaxTimeoutMS {
		return 0, false
	}
	return ms, true
}

// decodeStdioField decodes one stdio field into def, returning a problem
// word and field name when it is malformed.
func decodeStdioField(def *Definition, m decodeMember) (problem, field string) {
	invalid := func() (string, string) { return EntryInvalidField, m.key }
	switch m.key {
	case "command":
		if m.val.kind != decodeString || m.val.str == "" || strings.IndexByte(m.val.str, 0) >= 0 {
			return invalid()
		}
		def.Command = m.val.str
	case "args":
		args, ok := decodeStrings(m.val, false)
		if !ok {
			return invalid()
		}
		for _, a := range args {
			if strings.IndexByte(a, 0) >= 0 {
				return invalid()
			}
		}
		def.Args = args
	case "env":
		if m.val.kind != decodeObject {
			return invalid()
		}
		if _, dup := decodeDuplicateKey(m.val.members, false); dup {
			return EntryDuplicateField, m.key
		}
		env := make(map[string]string, len(m.val.members))
		for _, kv := range m.val.members {
			if kv.val.kind != decodeString || kv.key == "" ||
				strings.ContainsAny(kv.key, "=\x00") || strings.IndexByte(kv.val.str, 0) >= 0 {
				return invalid()
			}
			env[kv.key] = kv.val.str
		}
		def.Env = env
	case "cwd":
		if m.val.kind != decodeString || strings.IndexByte(m.val.str, 0) >= 0 {
			return invalid()
		}
		def.Cwd = m.val.str
	}
	return "", ""
}

// decodeHTTPField decodes one http (or sse, ws) field into def, returning
// a problem word and field name when it is malformed.
func decodeHTTPField(def *Definition, m decodeMember, st *decodeEntryState) (problem, field string) {
	invalid := func() (string, string) { return EntryInvalidField, m.key }
	switch m.key {
	case "url":
		if m.val.kind != decodeString || m.val.str == "" {
			return invalid()
		}
		def.URL = m.val.str
	case "headers":
		if m.val.kind != decodeObject {
			return invalid()
		}
		if _, dup := decodeDuplicateKey(m.val.members, true); dup {
			return EntryDuplicateField, m.key
		}
		headers := make(map[string]string, len(m.val.members))
		for _, kv := range m.val.members {
			if kv.val.kind != decodeString || !decodeHeaderToken(kv.key) ||
				strings.ContainsAny(kv.val.str, "\r\n\x00") {
				return invalid()
			}
			headers[kv.key] = kv.val.str
		}
		def.Headers = headers
	case "headersHelper":
		if m.val.kind == decodeString {
			st.helperIsShell = true
			return "", ""
		}
		argv, ok := decodeStrings(m.val, true)
		if !ok || len(argv) == 0 {
			return invalid()
		}
		for _, a := range argv {
			if strings.IndexByte(a, 0) >= 0 {
				return invalid()
			}
		}
		def.HeadersHelper = argv
	case "oauth":
		return decodeOAuth(def, m.val, st)
	}
	return "", ""
}

// decodeOAuth decodes the oauth object into def.OAuth. A clientSecret is
// noted in st and its value dropped.
func decodeOAuth(def *Definition, v *decodeValue, st *decodeEntryState) (problem, field string) {
	if v.kind != decodeObject {
		return EntryInvalidField, "oauth"
	}
	if key, dup := decodeDuplicateKey(v.members, false); dup {
		return EntryDuplicateField, "oauth." + decodeFieldName(key)
	}
	o := &OAuth{}
	for _, m := range v.members {
		invalid := func() (string, string) { return EntryInvalidField, "oauth." + m.key }
		switch m.key {
		case "clientId":
			if m.val.kind != decodeString {
				return invalid()
			}
			o.ClientID = m.val.str
		case "scopes":
			scopes, ok := decodeStrings(m.val, false)
			if !ok {
				return invalid()
			}
			o.Scopes = scopes
		case "callbackPort":
			if m.val.kind != decodeNumber {
				return invalid()
			}
			port, err := strconv.Atoi(m.val.str)
			if err != nil || port < 1 || port > 65535 {
				return invalid()
			}
			o.CallbackPort = port
		case "authServerMetadataUrl":
			if m.val.kind != decodeString {
				return invalid()
			}
			o.MetadataURL = m.val.str
		case "clientMetadataUrl":
			if m.val.kind != decodeString {
				return invalid()
			}
			o.ClientMetadataURL = m.val.str
		case "clientSecret":
			st.clientSecret = true
		default:
			return EntryUnknownField, "oauth." + decodeFieldName(m.key)
		}
	}
	def.OAuth = o
	return "", ""
}

// decodeToolNames reads a tool filter list: an array of non-empty strings
// without NUL, returned sorted, de-duplicated and non-nil.
func decodeToolNames(v *decodeValue) ([]string, bool) {
	names, ok := decodeStrings(v, true)
	if !ok {
		return nil, false
	}
	for _, n := range names {
		if strings.IndexByte(n, 0) >= 0 {
			return nil, false
		}
	}
	slices.Sort(names)
	return slices.Compact(names), true
}

// decodeStrings reads an array of strings; nonEmpty refuses "" elements.
func decodeStrings(v *decodeValue, nonEmpty bool) ([]string, bool) {
	if v.kind != decodeArray {
		return nil, false
	}
	out := make([]string, 0, len(v.elems))
	for _, e := range v.elems {
		if e.kind != decodeString || nonEmpty && e.str == "" {
			return nil, false
		}
		out = append(out, e.str)
	}
	return out, true
}

// decodeSmallObject is the member count up to which decodeDuplicateKey
// compares members pairwise instead of building a set.
const decodeSmallObject = 16

// decodeDuplicateKey returns the first key (in document order) that occurs
// again among members; foldCase compares keys ignoring case as
// strings.ToLower does.
func decodeDuplicateKey(members []decodeMember, foldCase bool) (string, bool) {
	if len(members) <= decodeSmallObject {
		for j := 1; j < len(members); j++ {
			for i := 0; i < j; i++ {
				if decodeSameKey(members[i].key, members[j].key, foldCase) {
					return members[j].key, true
				}
			}
		}
		return "", false
	}
	seen := make(map[string]bool, len(members))
	for _, m := range members {
		k := m.key
		if foldCase {
			k = strings.ToLower(k)
		}
		if seen[k] {
			return m.key, true
		}
		seen[k] = true
	}
	return "", false
}

// decodeSameKey reports whether a and b are the same key: equal, or with
// foldCase equal after strings.ToLower. ASCII keys are compared without
// lower-casing copies; anything else goes through strings.ToLower itself,
// whose Unicode mapping (the Kelvin sign lowers to "k") is the rule.
func decodeSameKey(a, b string, foldCase bool) bool {
	if a == b {
		return true
	}
	if !foldCase {
		return false
	}
	if decodeIsASCII(a) && decodeIsASCII(b) {
		if len(a) != len(b) {
			return false
		}
		for i := 0; i < len(a); i++ {
			if decodeLowerASCII(a[i]) != decodeLowerASCII(b[i]) {
				return false
			}
		}
		return true
	}
	return strings.ToLower(a) == strings.ToLower(b)
}

func decodeIsASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func decodeLowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// decodeHeaderToken reports whether s is an HTTP field name (RFC 9110
// token).
func decodeHeaderToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
			continue
		}
		if !strings.ContainsRune("!#$%&'*+-.^_`|~", rune(c)) {
			return false
		}
	}
	return true
}

// decodeKind is the JSON type of a decodeValue.
type decodeKind uint8

const (
	decodeNull decodeKind = iota
	decodeBool
	decodeNumber
	decodeString
	decodeArray
	decodeObject
)

// decodeValue is a parsed JSON value that, unlike encoding/json's maps,
// keeps every object member in document order with its exact key, so
// duplicate and case-mismatched keys stay visible.
type decodeValue struct {
	// str is a string's value or a number's literal text.
	str     string
	elems   []*decodeValue
	members []decodeMember
	// kind and b are last so the struct packs into 72 bytes.
	kind decodeKind
	b    bool
}

// decodeMember is one object member.
type decodeMember struct {
	key string
	val *decodeValue
}
