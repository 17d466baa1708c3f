package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// rvMark stands where a pod's resourceVersion goes, so one rendering serves
// every version of the pod: the list writes its own, watch events newer ones.
const rvMark = "@@RV@@"

// pod is one pre-rendered pod: its JSON is head + resourceVersion + tail.
type pod struct {
	namespace     string
	head, tail    []byte
	managedFields int // bytes of metadata.managedFields, key included
}

// size is the length of the pod's JSON with resourceVersion rv.
func (p *pod) size(rv string) int { return len(p.head) + len(rv) + len(p.tail) }

// renderPods builds n pods spread over namespaces, deterministically, as the
// API server serialises them (k8s.io/api types, encoding/json).
func renderPods(n, namespaces int) ([]pod, error) {
	r := rand.New(rand.NewPCG(uint64(n), 11))
	created := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	out := make([]pod, n)
	for i := range out {
		p := makePod(r, i, fmt.Sprintf("team-%02d", i%namespaces), created.Add(time.Duration(i)*time.Second))
		b, err := json.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("render pod %d: %w", i, err)
		}
		head, tail, ok := bytes.Cut(b, []byte(rvMark))
		if !ok {
			return nil, fmt.Errorf("render pod %d: no resourceVersion mark", i)
		}
		mf, err := json.Marshal(p.ManagedFields)
		if err != nil {
			return nil, fmt.Errorf("render pod %d: %w", i, err)
		}
		out[i] = pod{namespace: p.Namespace, head: head, tail: tail, managedFields: len(mf) + len(`,"managedFields":`)}
	}
	return out, nil
}

func hex(r *rand.Rand, n int) string {
	const digits = "0123456789abcdef"
	b := make([]byte, n)
	for i := range b {
		b[i] = digits[r.IntN(16)]
	}
	return string(b)
}

func alnum(r *rand.Rand, n int) string {
	const digits = "bcdfghjklmnpqrstvwxz2456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = digits[r.IntN(len(digits))]
	}
	return string(b)
}

func uid(r *rand.Rand) types.UID {
	return types.UID(hex(r, 8) + "-" + hex(r, 4) + "-" + hex(r, 4) + "-" + hex(r, 4) + "-" + hex(r, 12))
}

var apps = []string{"checkout", "payments", "catalog", "search", "frontend", "inventory", "shipping", "ledger"}

// makePod returns a pod shaped like one a Deployment runs: labels,
// annotations, an owner, two managedFields entries, one container with env,
// ports, a probe, resources and a mount, and a running status.
func makePod(r *rand.Rand, i int, namespace string, created time.Time) *corev1.Pod {
	app := apps[i%len(apps)]
	hash := alnum(r, 10)
	rs := app + "-" + hash
	name := rs + "-" + alnum(r, 5)
	node := fmt.Sprintf("node-a-%03d", r.IntN(200))
	podIP := fmt.Sprintf("10.%d.%d.%d", 64+r.IntN(32), r.IntN(256), 1+r.IntN(254))
	hostIP := fmt.Sprintf("172.20.%d.%d", r.IntN(256), 1+r.IntN(254))
	started := metav1.NewTime(created.Add(3 * time.Second))
	ready := metav1.NewTime(created.Add(9 * time.Second))
	image := fmt.Sprintf("shop/%s:v1.%d.%d", app, 20+r.IntN(10), r.IntN(30))
	trueP, falseP := true, false
	grace := int64(30)
	prio := int32(0)
	preempt := corev1.PreemptLowerPriority
	tolerate := int64(300)
	mode := int32(420)
	expiry := int64(3607)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:              name,
			GenerateName:      rs + "-",
			Namespace:         namespace,
			UID:               uid(r),
			ResourceVersion:   rvMark,
			CreationTimestamp: metav1.NewTime(created),
			Labels: map[string]string{
				"app":               app,
				"pod-template-hash": hash,
				"tier":              "backend",
			},
			Annotations: map[string]string{
				"kubectl.kubernetes.io/restartedAt": "2026-02-27T10:14:03Z",
			},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs, UID: uid(r),
				Controller: &trueP, BlockOwnerDeletion: &trueP,
			}},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{
					Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate,
					APIVersion: "v1", Time: &started, FieldsType: "FieldsV1",
					FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/restartedAt":{}},"f:generateName":{},"f:labels":{".":{},"f:app":{},"f:pod-template-hash":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:env":{},"f:image":{},"f:livenessProbe":{},"f:ports":{},"f:resources":{}}}}}`),
				},
				{
					Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate,
					APIVersion: "v1", Time: &ready, FieldsType: "FieldsV1", Subresource: "status",
					FieldsV1: metav1.NewFieldsV1(`{"f:status":{"f:conditions":{"k:{\"type\":\"Ready\"}":{".":{},"f:status":{}}},"f:containerStatuses":{},"f:phase":{},"f:podIP":{},"f:startTime":{}}}`),
				},
			},
		},
		Spec: corev1.PodSpec{
			Volumes: []corev1.Volume{
				{Name: "kube-api-access-" + alnum(r, 5), VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
					DefaultMode: &mode,
					Sources: []corev1.VolumeProjection{
						{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: &expiry, Path: "token"}},
						{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
							Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
					}}}},
			},
			Containers: []corev1.Container{{
				Name:  "app",
				Image: image,
				Ports: []corev1.ContainerPort{
					{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP},
				},
				Env: []corev1.EnvVar{
					{Name: "LOG_LEVEL", Value: "info"},
					{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}},
				},
				Resources: corev1.ResourceRequirements{
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")},
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
				},
				VolumeMounts: []corev1.VolumeMount{
					{Name: "kube-api-access", ReadOnly: true, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"},
				},
				LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
					Path: "/healthz", Port: intstr.FromString("http"), Scheme: corev1.URISchemeHTTP}},
					InitialDelaySeconds: 10, TimeoutSeconds: 1, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 3},
				TerminationMessagePath:   "/dev/termination-log",
				TerminationMessagePolicy: corev1.TerminationMessageReadFile,
				ImagePullPolicy:          corev1.PullIfNotPresent,
			}},
			RestartPolicy:                 corev1.RestartPolicyAlways,
			TerminationGracePeriodSeconds: &grace,
			DNSPolicy:                     corev1.DNSClusterFirst,
			ServiceAccountName:            app,
			NodeName:                      node,
			SchedulerName:                 corev1.DefaultSchedulerName,
			Tolerations: []corev1.Toleration{
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &tolerate},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &tolerate},
			},
			Priority:           &prio,
			EnableServiceLinks: &falseP,
			PreemptionPolicy:   &preempt,
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning,
			Conditions: []corev1.PodCondition{
				{Type: "PodReadyToStartContainers", Status: corev1.ConditionTrue, LastTransitionTime: started},
				{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: started},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: ready},
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: ready},
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(created)},
			},
			HostIP:    hostIP,
			HostIPs:   []corev1.HostIP{{IP: hostIP}},
			PodIP:     podIP,
			PodIPs:    []corev1.PodIP{{IP: podIP}},
			StartTime: &started,
			ContainerStatuses: []corev1.ContainerStatus{{
				Name:         "app",
				State:        corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}},
				Ready:        true,
				RestartCount: 0,
				Image:        image,
				ImageID:      "shop/" + app + "@sha256:" + hex(r, 64),
				ContainerID:  "containerd://" + hex(r, 64),
				Started:      &trueP,
			}},
			QOSClass: corev1.PodQOSBurstable,
		},
	}
}
