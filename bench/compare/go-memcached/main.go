// The comparator of opkit's memcached operator: the same operator written on Go's
// controller-runtime, making the same writes, so that `node bench/run.mjs compare` measures the
// runtimes and not two designs. Each choice that keeps it equal is written next to it.
//
// Writes per Memcached on its first pass (opkit's too): the finalizer (a JSON patch with a test
// of the resourceVersion), the Deployment and the Service (server-side apply, field manager
// memcached-operator, only when the desired fields differ from what is there), the status (an
// update of the status subresource, only when it changed), and two events. A resync of converged
// objects writes nothing.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

const (
	finalizer    = "cache.opkit.dev/finalizer"
	fieldManager = "memcached-operator"
	managedBy    = "memcached-operator"
	defaultImage = "memcached:1.6.38-alpine"
)

var gv = schema.GroupVersion{Group: "cache.opkit.dev", Version: "v1beta1"}

// MemcachedSpec mirrors apps/memcached-operator/src/api/v1beta1/memcached.ts (the stored version).
type MemcachedSpec struct {
	Replicas                int32                        `json:"replicas"`
	Image                   string                       `json:"image,omitempty"`
	Resources               *corev1.ResourceRequirements `json:"resources,omitempty"`
	MemoryLimitMB           int32                        `json:"memoryLimitMB,omitempty"`
	Port                    int32                        `json:"port,omitempty"`
	ExtraArgs               []string                     `json:"extraArgs,omitempty"`
	ProgressDeadlineSeconds int32                        `json:"progressDeadlineSeconds,omitempty"`
}

type MemcachedStatus struct {
	Nodes              []string           `json:"nodes,omitempty"`
	Replicas           int32              `json:"replicas"`
	ReadyReplicas      int32              `json:"readyReplicas"`
	Selector           string             `json:"selector,omitempty"`
	Phase              string             `json:"phase,omitempty"`
	ObservedGeneration int64              `json:"observedGeneration,omitempty"`
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
}

type Memcached struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              MemcachedSpec   `json:"spec"`
	Status            MemcachedStatus `json:"status,omitempty"`
}

type MemcachedList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Memcached `json:"items"`
}

// Hand-written deep copies (what controller-gen would generate).
func (in *Memcached) DeepCopyInto(out *Memcached) {
	*out = *in
	out.TypeMeta = in.TypeMeta
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec = in.Spec
	if in.Spec.Resources != nil {
		out.Spec.Resources = in.Spec.Resources.DeepCopy()
	}
	out.Spec.ExtraArgs = append([]string(nil), in.Spec.ExtraArgs...)
	out.Status = in.Status
	out.Status.Nodes = append([]string(nil), in.Status.Nodes...)
	out.Status.Conditions = nil
	for _, c := range in.Status.Conditions {
		out.Status.Conditions = append(out.Status.Conditions, *c.DeepCopy())
	}
}
func (in *Memcached) DeepCopy() *Memcached           { out := new(Memcached); in.DeepCopyInto(out); return out }
func (in *Memcached) DeepCopyObject() runtime.Object { return in.DeepCopy() }
func (in *MemcachedList) DeepCopyObject() runtime.Object {
	out := new(MemcachedList)
	*out = *in
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	out.Items = make([]Memcached, len(in.Items))
	for i := range in.Items {
		in.Items[i].DeepCopyInto(&out.Items[i])
	}
	return out
}

func selectorLabels(name string) map[string]string {
	return map[string]string{"app.kubernetes.io/name": "memcached", "app.kubernetes.io/instance": name}
}

func objectLabels(name string) map[string]string {
	l := selectorLabels(name)
	l["app.kubernetes.io/managed-by"] = managedBy
	return l
}

type reconciler struct {
	client.Client
	recorder record.EventRecorder
}

func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	mc := &Memcached{}
	if err := r.Get(ctx, req.NamespacedName, mc); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	// The finalizer, as opkit's ctx.finalize: a JSON patch that tests the resourceVersion.
	has := false
	for _, f := range mc.Finalizers {
		has = has || f == finalizer
	}
	if !mc.DeletionTimestamp.IsZero() {
		if !has {
			return reconcile.Result{}, nil
		}
		r.recorder.Eventf(mc, corev1.EventTypeWarning, "Deleting", "Custom Resource %s is being deleted from the namespace %s", mc.Name, mc.Namespace)
		var rest []string
		for _, f := range mc.Finalizers {
			if f != finalizer {
				rest = append(rest, f)
			}
		}
		return reconcile.Result{}, r.patchFinalizers(ctx, mc, rest)
	}
	if !has {
		if err := r.patchFinalizers(ctx, mc, append(append([]string(nil), mc.Finalizers...), finalizer)); err != nil {
			return reconcile.Result{}, err
		}
	}

	dep := desiredDeployment(mc)
	current := &appsv1.Deployment{}
	err := r.Get(ctx, req.NamespacedName, current)
	if err != nil && !apierrors.IsNotFound(err) {
		return reconcile.Result{}, err
	}
	exists := err == nil
	if !exists || deploymentDrifted(current, dep) {
		if err := r.Patch(ctx, dep, client.Apply, client.FieldOwner(fieldManager), client.ForceOwnership); err != nil {
			return reconcile.Result{}, err
		}
		if !exists {
			r.recorder.Eventf(mc, corev1.EventTypeNormal, "Created", "Created Deployment %s with %d replicas", mc.Name, mc.Spec.Replicas)
		} else if current.Spec.Replicas != nil && *current.Spec.Replicas != mc.Spec.Replicas {
			r.recorder.Eventf(mc, corev1.EventTypeNormal, "Scaled", "Scaled Deployment %s from %d to %d replicas", mc.Name, *current.Spec.Replicas, mc.Spec.Replicas)
		}
		current = dep
	}

	svc := desiredService(mc)
	currentSvc := &corev1.Service{}
	err = r.Get(ctx, req.NamespacedName, currentSvc)
	if err != nil && !apierrors.IsNotFound(err) {
		return reconcile.Result{}, err
	}
	if apierrors.IsNotFound(err) || serviceDrifted(currentSvc, svc) {
		if err := r.Patch(ctx, svc, client.Apply, client.FieldOwner(fieldManager), client.ForceOwnership); err != nil {
			return reconcile.Result{}, err
		}
		if apierrors.IsNotFound(err) {
			r.recorder.Eventf(mc, corev1.EventTypeNormal, "Created", "Created headless Service %s", mc.Name)
		}
	}

	pods := &corev1.PodList{}
	if err := r.List(ctx, pods, client.InNamespace(mc.Namespace), client.MatchingLabels(selectorLabels(mc.Name))); err != nil {
		return reconcile.Result{}, err
	}
	status := computeStatus(mc, current, pods.Items)
	if !equality.Semantic.DeepEqual(status, mc.Status) {
		mc.Status = status
		if err := r.Status().Update(ctx, mc); err != nil {
			return reconcile.Result{}, err
		}
	}
	return reconcile.Result{}, nil
}

func (r *reconciler) patchFinalizers(ctx context.Context, mc *Memcached, finalizers []string) error {
	ops := fmt.Sprintf(`[{"op":"test","path":"/metadata/resourceVersion","value":%q},{"op":"replace","path":"/metadata/finalizers","value":[%s]}]`, mc.ResourceVersion, quoteAll(finalizers))
	if len(mc.Finalizers) == 0 {
		ops = fmt.Sprintf(`[{"op":"test","path":"/metadata/resourceVersion","value":%q},{"op":"add","path":"/metadata/finalizers","value":[%s]}]`, mc.ResourceVersion, quoteAll(finalizers))
	}
	return r.Patch(ctx, mc, client.RawPatch(types.JSONPatchType, []byte(ops)))
}

func quoteAll(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = fmt.Sprintf("%q", x)
	}
	return strings.Join(q, ",")
}

func ownerRef(mc *Memcached) []metav1.OwnerReference {
	t := true
	return []metav1.OwnerReference{{APIVersion: gv.String(), Kind: "Memcached", Name: mc.Name, UID: mc.UID, Controller: &t, BlockOwnerDeletion: &t}}
}

func orDefault(v, d int32) int32 {
	if v == 0 {
		return d
	}
	return v
}

func desiredDeployment(mc *Memcached) *appsv1.Deployment {
	port := orDefault(mc.Spec.Port, 11211)
	image := mc.Spec.Image
	if image == "" {
		image = defaultImage
	}
	args := append([]string{"-m", fmt.Sprint(orDefault(mc.Spec.MemoryLimitMB, 64)), "-p", fmt.Sprint(port)}, mc.Spec.ExtraArgs...)
	f, t := false, true
	user := int64(11211)
	size := mc.Spec.Replicas
	deadline := orDefault(mc.Spec.ProgressDeadlineSeconds, 600)
	c := corev1.Container{
		Name: "memcached", Image: image, Args: args,
		Ports:           []corev1.ContainerPort{{Name: "memcached", ContainerPort: port, Protocol: corev1.ProtocolTCP}},
		ReadinessProbe:  &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("memcached")}}, PeriodSeconds: 10},
		LivenessProbe:   &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("memcached")}}, InitialDelaySeconds: 10, PeriodSeconds: 20},
		SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: &f, ReadOnlyRootFilesystem: &t, Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
	}
	if mc.Spec.Resources != nil {
		c.Resources = *mc.Spec.Resources
	}
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: mc.Name, Namespace: mc.Namespace, Labels: objectLabels(mc.Name), OwnerReferences: ownerRef(mc)},
		Spec: appsv1.DeploymentSpec{
			Replicas: &size, ProgressDeadlineSeconds: &deadline,
			Selector: &metav1.LabelSelector{MatchLabels: selectorLabels(mc.Name)},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: objectLabels(mc.Name)},
				Spec: corev1.PodSpec{
					AutomountServiceAccountToken: &f,
					SecurityContext:              &corev1.PodSecurityContext{RunAsNonRoot: &t, RunAsUser: &user, RunAsGroup: &user, SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
					Containers:                   []corev1.Container{c},
				},
			},
		},
	}
}

// deploymentDrifted: what opkit's apply compares, the fields the operator states.
func deploymentDrifted(cur, want *appsv1.Deployment) bool {
	if cur.Spec.Replicas == nil || *cur.Spec.Replicas != *want.Spec.Replicas || len(cur.Spec.Template.Spec.Containers) != 1 {
		return true
	}
	a, b := cur.Spec.Template.Spec.Containers[0], want.Spec.Template.Spec.Containers[0]
	return a.Image != b.Image || !equality.Semantic.DeepEqual(a.Args, b.Args) || !equality.Semantic.DeepEqual(cur.Labels, want.Labels) || len(cur.OwnerReferences) != 1
}

func desiredService(mc *Memcached) *corev1.Service {
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: mc.Name, Namespace: mc.Namespace, Labels: objectLabels(mc.Name), OwnerReferences: ownerRef(mc)},
		Spec: corev1.ServiceSpec{
			ClusterIP: "None", Selector: selectorLabels(mc.Name),
			Ports: []corev1.ServicePort{{Name: "memcached", Port: orDefault(mc.Spec.Port, 11211), TargetPort: intstr.FromString("memcached"), Protocol: corev1.ProtocolTCP}},
		},
	}
}

func serviceDrifted(cur, want *corev1.Service) bool {
	return cur.Spec.ClusterIP != "None" || !equality.Semantic.DeepEqual(cur.Spec.Selector, want.Spec.Selector) || len(cur.Spec.Ports) != 1 || cur.Spec.Ports[0].Port != want.Spec.Ports[0].Port
}

func depCondition(d *appsv1.Deployment, t appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	for i := range d.Status.Conditions {
		if d.Status.Conditions[i].Type == t {
			return &d.Status.Conditions[i]
		}
	}
	return nil
}

// computeStatus mirrors apps/memcached-operator/src/controllers/memcached/status.ts.
func computeStatus(mc *Memcached, dep *appsv1.Deployment, pods []corev1.Pod) MemcachedStatus {
	size := mc.Spec.Replicas
	s := dep.Status
	current := s.ObservedGeneration >= dep.Generation && dep.Spec.Replicas != nil && *dep.Spec.Replicas == size
	rolledOut := current && s.UpdatedReplicas == size && s.Replicas == size && s.AvailableReplicas >= size
	var broken *metav1.Condition
	if p := depCondition(dep, appsv1.DeploymentProgressing); p != nil && p.Status == corev1.ConditionFalse {
		broken = &metav1.Condition{Reason: p.Reason, Message: p.Message}
	}
	conds := append([]metav1.Condition(nil), mc.Status.Conditions...)
	set := func(c metav1.Condition) {
		c.ObservedGeneration = mc.Generation
		meta.SetStatusCondition(&conds, c)
	}
	available := size == 0 || (current && s.ReadyReplicas >= size)
	switch {
	case size == 0:
		set(metav1.Condition{Type: "Available", Status: metav1.ConditionTrue, Reason: "ScaledToZero", Message: "replicas is 0: no pods requested"})
	case available:
		set(metav1.Condition{Type: "Available", Status: metav1.ConditionTrue, Reason: "AllPodsReady", Message: fmt.Sprintf("%d/%d pods ready", s.ReadyReplicas, size)})
	default:
		set(metav1.Condition{Type: "Available", Status: metav1.ConditionFalse, Reason: "PodsNotReady", Message: fmt.Sprintf("%d/%d pods ready", s.ReadyReplicas, size)})
	}
	if rolledOut {
		set(metav1.Condition{Type: "Progressing", Status: metav1.ConditionFalse, Reason: "RolloutComplete", Message: fmt.Sprintf("%d pods run the current spec", size)})
	} else {
		reason := "Reconciling"
		if p := depCondition(dep, appsv1.DeploymentProgressing); p != nil {
			reason = p.Reason
		}
		set(metav1.Condition{Type: "Progressing", Status: metav1.ConditionTrue, Reason: reason, Message: fmt.Sprintf("%d/%d pods updated, %d ready", s.UpdatedReplicas, size, s.ReadyReplicas)})
	}
	if broken != nil {
		set(metav1.Condition{Type: "Degraded", Status: metav1.ConditionTrue, Reason: broken.Reason, Message: broken.Message})
	} else {
		set(metav1.Condition{Type: "Degraded", Status: metav1.ConditionFalse, Reason: "AsExpected", Message: "no failures"})
	}
	var nodes []string
	for _, p := range pods {
		if p.DeletionTimestamp.IsZero() {
			nodes = append(nodes, p.Name)
		}
	}
	sort.Strings(nodes)
	phase := "Pending"
	switch {
	case broken != nil:
		phase = "Degraded"
	case !rolledOut:
		phase = "Progressing"
	case available:
		phase = "Available"
	}
	return MemcachedStatus{
		Nodes: nodes, Replicas: s.Replicas, ReadyReplicas: s.ReadyReplicas,
		Selector: labels.SelectorFromSet(selectorLabels(mc.Name)).String(), Phase: phase,
		ObservedGeneration: mc.Generation, Conditions: conds,
	}
}

func main() {
	// --kubeconfig is controller-runtime's own flag (pkg/client/config), read by GetConfigOrDie.
	var metricsAddr string
	var workers int
	flag.StringVar(&metricsAddr, "metrics-bind-address", "0", "metrics address (0: off)")
	flag.IntVar(&workers, "max-concurrent-reconciles", 2, "workers (opkit's memcached controller has 2)")
	var cacheMemory, cacheMemoryNamespace string
	var cacheMemoryStrip bool
	flag.StringVar(&cacheMemory, "cache-memory", "", "measure the cache's heap per object for these kinds and exit (cache_memory.go)")
	flag.StringVar(&cacheMemoryNamespace, "cache-memory-namespace", "mem", "the namespace whose objects --cache-memory caches")
	flag.BoolVar(&cacheMemoryStrip, "cache-memory-strip-managed-fields", false, "--cache-memory with controller-runtime's TransformStripManagedFields")
	var servers serverFlags
	servers.register()
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseDevMode(false)))

	cfg := ctrl.GetConfigOrDie()
	// No client-side rate limit, as opkit's default (controller-runtime's default is 20 QPS).
	cfg.QPS = -1
	cfg.UserAgent = "go-memcached-operator"

	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	scheme.AddKnownTypes(gv, &Memcached{}, &MemcachedList{})
	metav1.AddToGroupVersion(scheme, gv)
	if cacheMemory != "" {
		if err := measureCacheMemory(cfg, scheme, cacheMemoryNamespace, cacheMemoryKinds(cacheMemory), cacheMemoryStrip); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}

	opts := ctrl.Options{
		Scheme:  scheme,
		Metrics: metricsserver.Options{BindAddress: metricsAddr},
		// Only our own pods are cached, as opkit's POD_INFORMER.
		Cache: cache.Options{ByObject: map[client.Object]cache.ByObject{&corev1.Pod{}: {Label: labels.SelectorFromSet(map[string]string{"app.kubernetes.io/managed-by": managedBy})}}},
	}
	if ns := os.Getenv("WATCH_NAMESPACE"); ns != "" {
		opts.Cache.DefaultNamespaces = map[string]cache.Config{}
		for _, n := range strings.Split(ns, ",") {
			opts.Cache.DefaultNamespaces[n] = cache.Config{}
		}
	}
	if err := servers.apply(&opts); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	r := &reconciler{Client: mgr.GetClient(), recorder: mgr.GetEventRecorderFor(fieldManager)}
	podToMemcached := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		name := o.GetLabels()["app.kubernetes.io/instance"]
		if name == "" {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
	})
	err = ctrl.NewControllerManagedBy(mgr).
		For(&Memcached{}).
		Owns(&appsv1.Deployment{}).
		Owns(&corev1.Service{}).
		Watches(&corev1.Pod{}, podToMemcached, builder.WithPredicates()).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(r)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := servers.start(mgr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	start := time.Now()
	fmt.Fprintf(os.Stderr, "{\"msg\":\"starting\",\"at\":%q}\n", start.Format(time.RFC3339Nano))
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
