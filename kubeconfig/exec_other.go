//go:build !unix

package kubeconfig

import "os/exec"

// ownProcessGroup leaves the default: exec.CommandContext kills the plugin
// itself at the timeout, and WaitDelay stops a child's pipes holding the run.
func ownProcessGroup(*exec.Cmd) {}

func killProcessGroup(*exec.Cmd) error { return nil }
