// Package integration holds tests that need modules no host should
// resolve when it imports composition: the conformance suites
// (authority_conformance_test.go, workspace_conformance_test.go) and a host program built outside this
// repository exactly as README "Embedding the library" says
// (outside_test.go). It is a module of its own that nothing imports.
package integration
