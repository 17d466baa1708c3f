//go:build unix

package kubeconfig

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup starts the plugin in a process group of its own, so that
// killing it at the timeout also kills the children it started (a shell
// plugin's pipeline, a forgotten background job), which would otherwise
// keep running and holding the output pipes.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killProcessGroup(cmd) }
}

func killProcessGroup(cmd *exec.Cmd) error {
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
