package catalog

import (
	"cmp"
	"context"
	"hash/maphash"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/mcpward/mcpward/core/jsontext"
	"github.com/mcpward/mcpward/ports"
)

// Result-size bounds.
const (
	// DefaultAdmissionCap is the number of characters a tool result may
	// put into model context unless Options or the tool's result-size
	// metadata say otherwise.
	DefaultAdmissionCap = 100_000
	// MetaMaxResultSizeChars is the one _meta key of a tool that mcpward
	// interprets: the tool's request for its own admission cap.
	MetaMaxResultSizeChars = "anthropic/maxResultSizeChars"
	// MinResultSizeChars and MaxResultSizeChars bound the value of
	// MetaMaxResultSizeChars that is honoured. Below 1,000 characters a
	// result is too short to be useful, so a smaller value is a mistake
	// (a unit confusion, say) rather than a wish to be heard. 500,000
	// characters, some 125,000 tokens, is the most one result may take of
	// a model's context window and still leave room for the conversation;
	// a server cannot ask for more, whatever it sends.
	MinResultSizeChars = 1_000
	// MaxResultSizeChars is the largest MetaMaxResultSizeChars value
	// honoured (see MinResultSizeChars).
	MaxResultSizeChars = 500_000
	// DefaultMaxBinaryBytes bounds, unless Options say otherwise, the
	// decoded bytes of one image, audio or embedded blob block of a
	// result: 5 MiB, the image size limit of common model APIs (about
	// 6.7 MiB of base64 on the wire). Binary blocks do not count against
	// the admission cap, which limits characters of text.
	DefaultMaxBinaryBytes = 5 << 20
)

// Rejected.Reason words of Build and NewSet (a Lists.Dropped entry keeps
// the session's own reason).
const (
	// ReasonInvalidName: a tool without a name.
	ReasonInvalidName = "invalid_name"
	// ReasonDuplicateName: a tool named like an earlier one of the same
	// server; the first stays.
	ReasonDuplicateName = "duplicate_name"
	// ReasonNameCollision: tools of different names whose host-facing
	// names are equal, within a server or across servers; all are
	// rejected.
	ReasonNameCollision = "name_collision"
	// ReasonInvalidInputSchema: an inputSchema that is not a JSON object
	// or whose "type" is not "object".
	ReasonInvalidInputSchema = "invalid_input_schema"
	// ReasonInvalidEntry: a prompt, resource or resource template that is
	// not a JSON object with its string identifier.
	ReasonInvalidEntry = "invalid_entry"
	// ReasonDropped is the reason of a Lists.Dropped entry that gave none.
	ReasonDropped = "dropped"
	// ReasonToolFiltered: the server's definition filters the tool out
	// (Options.IncludeTools, Options.ExcludeTools).
	ReasonToolFiltered = "tool_filtered"
	// ReasonPolicyDenied: a managed policy pattern (Options.DeniedTools)
	// matches the tool.
	ReasonPolicyDenied = "policy_denied"
	// ReasonCatalogTooLarge: the admitted tools' strings or narrowed
	// schemas add up to more than a catalog keeps (4 GiB each, far above
	// Discover's default bounds); every tool is rejected with it.
	ReasonCatalogTooLarge = "catalog_too_large"
)

// maxStoreBytes is the most bytes of strings, and of packed schemas, one
// catalog keeps (its offsets are 32 bits); a test lowers it.
var maxStoreBytes = math.MaxUint32

// Diagnostic.Reason words of Build.
const (
	// DiagSchemaNarrowed: the input schema was narrowed; Paths lists the
	// replaced subschemas.
	DiagSchemaNarrowed = "schema_narrowed"
	// DiagResultSizeMetaIgnored: the tool's MetaMaxResultSizeChars value
	// was malformed or out of range and the admission cap stayed the
	// default.
	DiagResultSizeMetaIgnored = "result_size_meta_ignored"
	// DiagOutputSchemaNarrowed: the output schema was narrowed like an
	// input schema; Paths lists the replaced subschemas, whose parts of
	// structuredContent are then not checked.
	DiagOutputSchemaNarrowed = "output_schema_narrowed"
	// DiagOutputSchemaInvalid: the outputSchema is not a JSON object
	// schema of "type" "object" (the protocol requires one, since
	// structuredContent is an object). The tool stays usable as one
	// without an output schema: its Spec has no OutputSchema and its
	// structuredContent is handed over unchecked.
	DiagOutputSchemaInvalid = "output_schema_invalid"
	// DiagInputSchemaTooDeep: the input schema is nested deeper than a
	// JSON value a catalog keeps (128 levels), so its Spec carries no
	// ServerInputSchema; the narrowed one (bounded at 32 levels) is
	// enforced as for any tool.
	DiagInputSchemaTooDeep = "input_schema_too_deep"
)

// Caller makes one tool call on the server's current session; the
// supervisor implements it. It must be safe for concurrent use and never
// replays a call; its errors reach the host unchanged (see Tool.Call).
type Caller interface {
	// Call makes the call r (r.Name is the server's tool name).
	Call(ctx context.Context, r ports.CallRequest) (ports.CallResult, error)
}

// Rejected is one entry that did not make it into the catalog.
type Rejected struct {
	// Server is the server id the entry belongs to.
	Server string `json:"server"`
	// Kind is the list the entry came from, or KindServer for a whole
	// server.
	Kind ports.ListKind `json:"kind"`
	// Name is the entry's name as the server (or definition) gave it.
	Name string `json:"name"`
	// Reason is a stable lower_snake_case word.
	Reason string `json:"reason"`
}

// Diagnostic is a non-fatal finding about one admitted tool, reported once
// per tool and reason.
type Diagnostic struct {
	// Tool is the server's tool name.
	Tool string `json:"tool"`
	// Reason is a stable lower_snake_case word ("schema_narrowed",
	// "result_size_meta_ignored", ...).
	Reason string `json:"reason"`
	// Paths are the JSON pointers concerned: for "schema_narrowed", the
	// input schema's replaced subschemas (see Narrow); for
	// "output_schema_narrowed", the output schema's.
	Paths []string `json:"paths,omitempty"`
}

// Options tunes Build. nil means the defaults.
type Options struct {
	// AdmissionCap is the admission cap, in characters, of every tool
	// without valid result-size metadata; 0 (or less) means
	// DefaultAdmissionCap. It is the host's own choice and is not bounded
	// by MaxResultSizeChars, which bounds only what a server may ask for.
	AdmissionCap int
	// IncludeTools, when non-nil, lists the only tools (by the server's
	// own names) admitted; an empty non-nil list admits none. Every other
	// tool is rejected with ReasonToolFiltered.
	IncludeTools []string
	// ExcludeTools lists tools (by the server's own names) rejected with
	// ReasonToolFiltered; it wins over IncludeTools.
	ExcludeTools []string
	// DeniedTools are patterns (see MatchToolPattern) of a managed policy:
	// a matching tool is rejected with ReasonPolicyDenied, whatever the
	// include and exclude lists say.
	DeniedTools []string
	// ReadCap is the most bytes of a resource read admitted (see
	// Catalog.ReadResource); 0 (or less) means DefaultReadCap.
	ReadCap int
	// MaxBinaryBytes bounds the decoded bytes of each image, audio or
	// embedded blob block of a result; 0 (or less) means
	// DefaultMaxBinaryBytes. A larger block refuses the result
	// (ReasonBinaryTooLarge).
	MaxBinaryBytes int
	// ResultMetaKeys lists the keys of a result's _meta passed through in
	// ToolResult.Meta; nil (the default) passes none, since the protocol
	// defines no result _meta key a host needs. The rest of _meta is
	// dropped: it is the server's, not context.
	ResultMetaKeys []string
}

// Catalog is one server's canonical, host-facing catalog. Build makes it;
// it is immutable afterwards (its exported fields must not be modified)
// and safe for concurrent use.
type Catalog struct {
	// Server is the server id.
	Server string
	// Identity is the session identity the catalog is bound to.
	Identity ports.SessionIdentity
	// Tools are the admitted tools, sorted by host-facing name.
	Tools []*Tool
	// Prompts, Resources and ResourceTemplates are the admitted entries,
	// in the server's order.
	Prompts           []*Prompt
	Resources         []*Resource
	ResourceTemplates []*ResourceTemplate
	// Rejected holds every entry that did not make it, with its reason,
	// sorted by Server, Kind, Name and Reason.
	Rejected []Rejected
	// Diagnostics are findings about admitted tools, sorted by Tool and
	// Reason.
	Diagnostics []Diagnostic
	// Partial maps each list kind whose discovery stopped early to its
	// Partial* reason; nil when discovery was complete.
	Partial map[ports.ListKind]string
	// Stale reports that a refresh of this catalog failed and it was kept
	// as it was (see MarkStale).
	Stale bool
	// Cache maps each list kind whose pages carried the server's caching
	// hints (protocol 2026-07-28 and later) to their combination
	// (CombineCache): how long the server says the list stays fresh, and
	// whether it is meant for this user only. nil for a legacy session's
	// catalog. The catalog itself never expires: the supervisor lists
	// again when a positive TTL has passed (within the host's bounds).
	Cache map[ports.ListKind]ports.CacheHint

	// slab holds the Tools (Tools[i] is &slab[i]); their records, strings
	// and schemas are in srv.st, whose str and index are copied here for
	// Tool.
	slab  []Tool
	names string
	index nameIndex
	srv   *toolServer
}

// Build makes server's catalog from what Discover returned. It takes
// ownership of l's slices (the caller must not modify them afterwards)
// and never modifies the tool schemas. Calls of its tools go through c (a
// nil c makes every call fail with Reason "no_caller").
//
// A tool is rejected (Rejected.Kind "tools") when its name is empty
// ("invalid_name"), when an earlier tool had the same name
// ("duplicate_name"; the first one stays), when its inputSchema is not a
// JSON object or has a "type" other than "object"
// ("invalid_input_schema"), and when its host-facing name equals another
// tool's ("name_collision", every tool involved). Before those checks, a
// tool matching one of opts.DeniedTools is rejected with "policy_denied"
// and one that opts.IncludeTools or opts.ExcludeTools leave out with
// "tool_filtered": neither ever reaches the host's tool set, nor takes
// part in a name collision. Should the admitted tools' strings or
// narrowed schemas exceed what a catalog keeps (4 GiB each; Discover's
// default bound is 32 MiB), every tool is rejected with
// "catalog_too_large". Every Lists.Dropped entry
// is rejected with its reason. A prompt that is not a JSON object with a
// string "name", a resource without a string "uri" or a template without a
// string "uriTemplate" is rejected with "invalid_entry".
//
// Each admitted tool's schema is narrowed (see Narrow), a Diagnostic
// "schema_narrowed" listing the paths when anything was. Its admission cap
// is opts.AdmissionCap, replaced by the tool's _meta
// "anthropic/maxResultSizeChars" when that is a JSON number holding an
// integer within [MinResultSizeChars, MaxResultSizeChars]; any other value
// is ignored with a Diagnostic "result_size_meta_ignored".
//
// A decoded inputSchema whose JSON passes MaxSchemaBytes (a host's Go
// value sharing one sub-schema many times over, or holding a cycle, see
// the package doc) is rejected with "invalid_input_schema" as soon as
// writing it passes that bound, never expanded; an outputSchema like it
// is "output_schema_invalid".
//
// A tool's outputSchema, when it has one, is narrowed the same way (a
// Diagnostic "output_schema_narrowed" listing the paths when anything
// was); one that is not a JSON object with "type" "object" leaves the
// tool admitted without an output schema, with a Diagnostic
// "output_schema_invalid". The tool's title and annotations are kept as
// the server gave them.
//
// Tools whose narrowed schemas are byte-identical share one copy and one
// validator. Build is safe for concurrent use; for a large catalog it
// narrows on up to GOMAXPROCS goroutines, all finished when it returns.
func Build(server string, id ports.SessionIdentity, l Lists, c Caller, opts *Options) *Catalog {
	defCap := DefaultAdmissionCap
	if opts != nil && opts.AdmissionCap > 0 {
		defCap = opts.AdmissionCap
	}
	id.Declared = slices.Clone(id.Declared)
	cat := &Catalog{Server: server, Identity: id}
	if len(l.Partial) > 0 {
		cat.Partial = maps.Clone(l.Partial)
	}
	if len(l.Cache) > 0 {
		cat.Cache = maps.Clone(l.Cache)
	}
	reject := func(kind ports.ListKind, name, reason string) {
		cat.Rejected = append(cat.Rejected, Rejected{Server: server, Kind: kind, Name: name, Reason: reason})
	}

	srv := &toolServer{id: server, caller: c, cap: defCap, readCap: DefaultReadCap, binCap: DefaultMaxBinaryBytes}
	if opts != nil {
		if opts.ReadCap > 0 {
			srv.readCap = opts.ReadCap
		}
		if opts.MaxBinaryBytes > 0 {
			srv.binCap = opts.MaxBinaryBytes
		}
		srv.metaKeys = slices.Clone(opts.ResultMetaKeys)
	}
	cat.srv = srv
	// First the cheap checks, in the server's order, so that the first of
	// two tools with one name is the one kept.
	idx := make([]int, 0, len(l.Tools))
	seen := make(map[string]struct{}, len(l.Tools))
	var include, exclude map[string]bool
	var denied []string
	if opts != nil {
		if opts.IncludeTools != nil {
			include = make(map[string]bool, len(opts.IncludeTools))
			for _, n := range opts.IncludeTools {
				include[n] = true
			}
		}
		if len(opts.ExcludeTools) > 0 {
			exclude = make(map[string]bool, len(opts.ExcludeTools))
			for _, n := range opts.ExcludeTools {
				exclude[n] = true
			}
		}
		denied = opts.DeniedTools
	}
	pre := l.prepared.matches(l.Tools)
	for i, it := range l.Tools {
		if it.Name == "" {
			reject(ports.ListTools, "", ReasonInvalidName)
			continue
		}
		if toolDenied(denied, server, it.Name) {
			reject(ports.ListTools, it.Name, ReasonPolicyDenied)
			continue
		}
		if include != nil && !include[it.Name] || exclude[it.Name] {
			reject(ports.ListTools, it.Name, ReasonToolFiltered)
			continue
		}
		if _, dup := seen[it.Name]; dup {
			reject(ports.ListTools, it.Name, ReasonDuplicateName)
			continue
		}
		seen[it.Name] = struct{}{}
		// Discover's preparer checked the schema already; prepare
		// checks a raw one (see mayAdmit).
		if pre && l.prepared.ks[i] < 0 || !pre && !mayAdmit(it.InputSchema) {
			reject(ports.ListTools, it.Name, ReasonInvalidInputSchema)
			continue
		}
		idx = append(idx, i)
	}
	seen = nil
	// Then names and narrowing, the costly part.
	drafts := make([]draft, len(l.Tools))
	var sb schemaBuilder
	prepare(server, l.Tools, idx, drafts, l.prepared, &sb)
	idx = slices.DeleteFunc(idx, func(i int) bool {
		if drafts[i].invalid {
			reject(ports.ListTools, drafts[i].name, ReasonInvalidInputSchema)
		}
		return drafts[i].invalid
	})

	// kept are the indices (into l.Tools) of the tools admitted.
	kept := make([]int, 0, len(idx))
	var metaIgnored, outputInvalid map[int]bool
	var collided map[string]bool
	var outPacker *packer
	outK := make(map[int]uint32)
	outNarrowed := make(map[int][]string)
	caps := make(map[int]int)
	byHost := make(map[string]int, len(idx))
	for _, i := range idx {
		d := &drafts[i]
		if o := l.Tools[i].OutputSchema; o != nil {
			switch k, narrowed, state := packOutput(&outPacker, o); state {
			case schemaPacked:
				outK[i], outNarrowed[i] = k, narrowed
			case schemaInvalid:
				if outputInvalid == nil {
					outputInvalid = make(map[int]bool)
				}
				outputInvalid[i] = true
			}
		}
		if v, has := l.Tools[i].Meta[MetaMaxResultSizeChars]; has {
			if c, ok := resultSizeMeta(v); ok {
				caps[i] = c
			} else {
				if metaIgnored == nil {
					metaIgnored = make(map[int]bool)
				}
				metaIgnored[i] = true
			}
		}
		if other, dup := byHost[d.host]; dup {
			if collided == nil {
				collided = make(map[string]bool)
			}
			collided[d.host] = true
			reject(ports.ListTools, d.name, ReasonNameCollision)
			if other >= 0 {
				reject(ports.ListTools, drafts[other].name, ReasonNameCollision)
				byHost[d.host] = -1
			}
			continue
		}
		byHost[d.host] = i
		kept = append(kept, i)
	}
	byHost = nil
	if len(collided) > 0 {
		kept = slices.DeleteFunc(kept, func(i int) bool { return collided[drafts[i].host] })
	}
	slices.SortFunc(kept, func(a, b int) int { return strings.Compare(drafts[a].host, drafts[b].host) })
	if outPacker != nil {
		outPacker.done()
		sb.add(outPacker)
	}
	// Every string of every tool, end to end: the server's name is the
	// end of the host name whenever it fits there, and then shares it.
	var str strBuilder
	size := 0
	for _, i := range kept {
		it := &l.Tools[i]
		size += len(drafts[i].host) + len(it.Description) + len(it.Title)
		if !strings.HasSuffix(drafts[i].host, it.Name) {
			size += len(it.Name)
		}
		if it.Annotations != nil {
			size += len(it.Annotations.Title)
		}
		for _, p := range drafts[i].dropped {
			size += len(p)
		}
		for _, p := range outNarrowed[i] {
			size += len(p)
		}
	}
	if schemas := sb.size(); size > maxStoreBytes || schemas > maxStoreBytes {
		// Offsets are 32 bits: only a host that raised Discover's byte
		// bound past 4 GiB gets here. No tool is admitted.
		for _, i := range kept {
			reject(ports.ListTools, drafts[i].name, ReasonCatalogTooLarge)
		}
		kept, size, outPacker = kept[:0], 0, nil
		sb = schemaBuilder{}
	}
	st := &toolStore{sch: sb.build()}
	srv.st = st
	str.Grow(size)
	st.recs = make([]toolRec, len(kept))
	cat.slab = make([]Tool, len(kept))
	cat.Tools = make([]*Tool, len(kept))
	var outs []schemaEntry
	for j, i := range kept {
		it, d, r := &l.Tools[i], &drafts[i], &st.recs[j]
		r.host = str.add(d.host)
		if n := len(d.name); strings.HasSuffix(d.host, d.name) {
			r.name = span{r.host.off + r.host.n - uint32(n), uint32(n)}
		} else {
			r.name = str.add(d.name)
		}
		r.desc = str.add(it.Description)
		r.title = str.add(it.Title)
		r.schema = sb.base[d.p] + d.k
		r.written = noSchema
		if d.hasW {
			r.written = sb.base[d.wp] + d.w
		}
		r.narrowed = st.addPaths(&str, d.dropped)
		r.output = noSchema
		if k, ok := outK[i]; ok {
			r.output = sb.base[outPacker] + k
			r.outNarrowed = st.addPaths(&str, outNarrowed[i])
		}
		if a := it.Annotations; a != nil {
			r.ann = true
			r.annTitle = str.add(a.Title)
			for b, h := range [...]*bool{a.ReadOnlyHint, a.DestructiveHint, a.IdempotentHint, a.OpenWorldHint} {
				v := uint8(hintUnset)
				if h != nil {
					v = hintFalse
					if *h {
						v = hintTrue
					}
				}
				r.hints |= v << (2 * b)
			}
		}
		t := &cat.slab[j]
		t.srv, t.i, t.cap = srv, uint32(j), defCap
		if c, ok := caps[i]; ok {
			t.cap = c
		}
		if r.output != noSchema {
			if outs == nil {
				outs = make([]schemaEntry, 0, len(outK))
			}
			outs = append(outs, schemaEntry{st: &st.sch, k: r.output})
			t.output = &outs[len(outs)-1]
		}
		cat.Tools[j] = t
	}
	st.str = str.String()
	st.paths = slices.Clip(st.paths)
	cat.names, cat.index = st.str, newNameIndex(len(kept))
	for j := range st.recs {
		cat.index.put(st.get(st.recs[j].host), st.recs[j].host.off, uint32(j), 0)
	}
	for j := range cat.Tools {
		i, r := kept[j], &st.recs[j]
		name := st.get(r.name)
		if r.narrowed.n > 0 {
			cat.Diagnostics = append(cat.Diagnostics, Diagnostic{Tool: name, Reason: DiagSchemaNarrowed, Paths: st.strings(r.narrowed)})
		}
		if metaIgnored[i] {
			cat.Diagnostics = append(cat.Diagnostics, Diagnostic{Tool: name, Reason: DiagResultSizeMetaIgnored})
		}
		if r.outNarrowed.n > 0 {
			cat.Diagnostics = append(cat.Diagnostics, Diagnostic{Tool: name, Reason: DiagOutputSchemaNarrowed, Paths: st.strings(r.outNarrowed)})
		}
		if outputInvalid[i] {
			cat.Diagnostics = append(cat.Diagnostics, Diagnostic{Tool: name, Reason: DiagOutputSchemaInvalid})
		}
		if r.written == noSchema {
			cat.Diagnostics = append(cat.Diagnostics, Diagnostic{Tool: name, Reason: DiagInputSchemaTooDeep})
		}
	}
	for _, d := range l.Dropped {
		reason := d.Reason
		if reason == "" {
			reason = ReasonDropped
		}
		reject(ports.ListTools, d.Name, reason)
	}
	cat.Prompts = admitPrompts(l.Prompts, srv, reject)
	cat.Resources = admitResources(l.Resources, srv, reject)
	cat.ResourceTemplates = admitTemplates(l.ResourceTemplates, srv, reject)
	sortRejected(cat.Rejected)
	slices.SortFunc(cat.Diagnostics, func(a, b Diagnostic) int {
		return cmp.Or(cmp.Compare(a.Tool, b.Tool), cmp.Compare(a.Reason, b.Reason))
	})
	return cat
}

// resultSizeMeta returns the admission cap a MetaMaxResultSizeChars value
// asks for, and whether the value is valid: a JSON number holding an
// integer within [MinResultSizeChars, MaxResultSizeChars].
func resultSizeMeta(v any) (int, bool) {
	f, ok := number(v)
	if !ok || f != math.Trunc(f) || f < MinResultSizeChars || f > MaxResultSizeChars {
		return 0, false
	}
	return int(f), true
}

func trimSpace(b []byte) []byte {
	return b[jsontext.SkipSpace(b, 0):]
}

func sortRejected(r []Rejected) {
	slices.SortFunc(r, func(a, b Rejected) int {
		return cmp.Or(cmp.Compare(a.Server, b.Server), cmp.Compare(a.Kind, b.Kind),
			cmp.Compare(a.Name, b.Name), cmp.Compare(a.Reason, b.Reason))
	})
}

// Tool returns the admitted tool with host-facing name hostName.
func (c *Catalog) Tool(hostName string) (*Tool, bool) {
	// nameIndex.get, by hand (see Set.Tool).
	slots := c.index.slots
	if len(slots) == 0 || len(hostName) > 0xff {
		return nil, false
	}
	h := maphash.String(c.index.seed, hostName)
	key := slotKey(h, len(hostName))
	mask := uint64(len(slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		x := &slots[i]
		if x.ref == 0 {
			return nil, false
		}
		if x.key == key && c.names[x.off:x.off+uint32(len(hostName))] == hostName {
			return &c.slab[x.ref-1], true
		}
	}
}

// Complete reports whether discovery drained every declared list (no
// Partial mark).
func (c *Catalog) Complete() bool { return len(c.Partial) == 0 }

// MarkStale returns a copy of c with Stale set, for a catalog kept after a
// failed refresh; c itself is unchanged. The copy shares c's tools.
func (c *Catalog) MarkStale() *Catalog {
	d := *c
	d.Stale = true
	return &d
}

// ModelTools returns the admitted tools as ports.Tool values, sorted by
// host-facing name, in a new slice (see Set.Tool for the naming rule).
func (c *Catalog) ModelTools() []ports.Tool {
	out := make([]ports.Tool, len(c.Tools))
	for i, t := range c.Tools {
		out[i] = t
	}
	return out
}

// HostTools returns ModelTools.
//
// Deprecated: use ModelTools (see Set.ModelTools).
func (c *Catalog) HostTools() []ports.Tool { return c.ModelTools() }
