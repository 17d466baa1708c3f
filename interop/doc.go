// Package interop checks that clients listwatch did not write get from
// watchtest what they get from kube-apiserver: here a client-go dynamic
// informer. It is a module of its own so that the library's go.mod never
// needs client-go.
package interop
