package apiserve

import "strings"

// Path is what a resource request's URL names:
//
//	/api/v1/[namespaces/NS/]RESOURCE[/NAME[/SUBRESOURCE]]
//	/apis/GROUP/VERSION/[namespaces/NS/]RESOURCE[/NAME[/SUBRESOURCE]]
type Path struct {
	Group, Version, Namespace, Resource, Name, Subresource string
}

// ParsePath reads a resource request's path; a path of any other shape is
// the real server's 404 for an unknown resource.
func ParsePath(path string) (Path, *Error) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	var p Path
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		p.Version, parts = parts[1], parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		p.Group, p.Version, parts = parts[1], parts[2], parts[3:]
	default:
		return Path{}, UnknownResource()
	}
	switch {
	case len(parts) >= 3 && parts[0] == "namespaces" && len(parts) <= 5:
		p.Namespace, p.Resource, parts = parts[1], parts[2], parts[3:]
	case len(parts) <= 3:
		p.Resource, parts = parts[0], parts[1:]
	default:
		return Path{}, UnknownResource()
	}
	if len(parts) >= 1 {
		p.Name = parts[0]
	}
	if len(parts) == 2 {
		p.Subresource = parts[1]
	}
	return p, nil
}
