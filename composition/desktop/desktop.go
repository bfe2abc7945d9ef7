// Package desktop is the deployment profile of a person's machine: tokens
// in the OS keychain (adapters/keychainstore: the Secret Service over
// D-Bus on Linux, the macOS Keychain, the Windows credential manager),
// approvals, audit and locks on files under a state directory laid out as
// package headless describes.
package desktop
