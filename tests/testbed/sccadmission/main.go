// sccadmission serves OpenShift's own SecurityContextConstraints admission (the plugin
// security.openshift.io/SecurityContextConstraint from github.com/openshift/apiserver-library-go) to a vanilla
// kube-apiserver as admission webhooks, and assigns namespaces their openshift.io/sa.scc.* annotations the way
// OpenShift's namespace-security-allocation controller does (blocks of 10,000 UIDs from 1,000,000,000).
//
// Endpoints (HTTPS, AdmissionReview v1):
//
//	/mutate-pods       the plugin's Admit: picks the SCC, defaults the security contexts, sets openshift.io/scc
//	/validate-pods     the plugin's Validate on the final pod
//	/mutate-namespaces the namespace's UID range, supplemental groups and MCS label, when missing
//	/mutate-sccs       OpenShift's defaults for SCC objects (fsGroup, supplementalGroups, volumes, ...), which
//	                   OpenShift's own kube-apiserver applies when an SCC is written
//	/healthz           200 once the informers have synced
//
// It is part of the kubeforge testbed: it listens on loopback only and trusts the API server's client CA for nothing
// (the API server calls it; it calls the API server with its own kubeconfig).
package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	coreapi "k8s.io/kubernetes/pkg/apis/core"
	_ "k8s.io/kubernetes/pkg/apis/core/install"

	securityv1 "github.com/openshift/api/security/v1"
	"github.com/openshift/apiserver-library-go/pkg/securitycontextconstraints/sccadmission"
	"github.com/openshift/apiserver-library-go/pkg/securitycontextconstraints/sccdefaults"
	securityclient "github.com/openshift/client-go/security/clientset/versioned"
	securityinformers "github.com/openshift/client-go/security/informers/externalversions"
	"github.com/openshift/library-go/pkg/security/uid"
)

const maxReviewBytes = 8 << 20

// OpenShift's defaults: the UID range 1000000000-1999999999 in blocks of 10000; MCS labels of two categories.
const (
	uidRangeStart = 1000000000
	uidRangeEnd   = 1999999999
	uidBlockSize  = 10000
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of this webhook's identity (needs system:auth-delegator, SCC and namespace read, namespace patch)")
	listen := flag.String("listen", "127.0.0.1:0", "address to serve HTTPS on (loopback)")
	certFile := flag.String("tls-cert-file", "", "serving certificate")
	keyFile := flag.String("tls-private-key-file", "", "serving key")
	flag.Parse()
	if *kubeconfig == "" || *certFile == "" || *keyFile == "" {
		log.Fatal("sccadmission: --kubeconfig, --tls-cert-file and --tls-private-key-file are required")
	}
	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		log.Fatalf("sccadmission: %v", err)
	}
	// No client-side rate limit: the plugin asks a SubjectAccessReview for each SCC it tries, for the user and the
	// service account, in both webhooks, so a DaemonSet on 100 nodes is thousands of reviews, and at 100 QPS its pods
	// were created in bursts seconds apart (the API server's own priority and fairness still applies).
	config.QPS = -1
	kube := kubernetes.NewForConfigOrDie(config)
	security := securityclient.NewForConfigOrDie(config)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	kubeInformers := informers.NewSharedInformerFactory(kube, 0)
	securityInformers := securityinformers.NewSharedInformerFactory(security, 0)
	plugin := sccadmission.NewConstraint()
	plugin.SetSecurityInformers(securityInformers.Security().V1().SecurityContextConstraints())
	plugin.SetExternalKubeInformerFactory(kubeInformers)
	plugin.SetAuthorizer(subjectAccessReviewer{kube})
	if err := plugin.ValidateInitialization(); err != nil {
		log.Fatalf("sccadmission: %v", err)
	}
	namespaces := kubeInformers.Core().V1().Namespaces()
	alloc := newAllocator(namespaces.Lister())
	if _, err := namespaces.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj interface{}) { alloc.annotateLater(obj) },
		UpdateFunc: func(_, obj interface{}) { alloc.annotateLater(obj) },
	}); err != nil {
		log.Fatalf("sccadmission: %v", err)
	}
	kubeInformers.Start(ctx.Done())
	securityInformers.Start(ctx.Done())
	synced := func() bool {
		return namespaces.Informer().HasSynced() && securityInformers.Security().V1().SecurityContextConstraints().Informer().HasSynced()
	}
	go alloc.run(ctx, kube, synced)

	s := &server{plugin: plugin, alloc: alloc}
	mux := http.NewServeMux()
	mux.HandleFunc("/mutate-pods", s.handle(s.mutatePod))
	mux.HandleFunc("/validate-pods", s.handle(s.validatePod))
	mux.HandleFunc("/mutate-namespaces", s.handle(s.mutateNamespace))
	mux.HandleFunc("/mutate-sccs", s.handle(s.mutateSCC))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		if !synced() {
			http.Error(w, "informers not synced", http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "ok")
	})
	cert, err := tls.LoadX509KeyPair(*certFile, *keyFile)
	if err != nil {
		log.Fatalf("sccadmission: %v", err)
	}
	httpServer := &http.Server{
		Addr:              *listen,
		Handler:           mux,
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = httpServer.Shutdown(shutdown)
	}()
	log.Printf("sccadmission: serving on https://%s", *listen)
	if err := httpServer.ListenAndServeTLS("", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatalf("sccadmission: %v", err)
	}
}

// ------------------------------------------------------------------------------------------------ authorizer

// subjectAccessReviewer asks the API server (RBAC) whether a user may "use" an SCC, without caching: a grant or
// revocation takes effect for the next pod, as with OpenShift's in-process authorizer.
type subjectAccessReviewer struct{ kube kubernetes.Interface }

func (s subjectAccessReviewer) Authorize(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	u := a.GetUser()
	extra := map[string]authorizationv1.ExtraValue{}
	for k, v := range u.GetExtra() {
		extra[k] = v
	}
	review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: u.GetName(), UID: u.GetUID(), Groups: u.GetGroups(), Extra: extra,
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: a.GetNamespace(), Verb: a.GetVerb(), Group: a.GetAPIGroup(), Version: a.GetAPIVersion(),
			Resource: a.GetResource(), Subresource: a.GetSubresource(), Name: a.GetName(),
		},
	}}
	result, err := s.kube.AuthorizationV1().SubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
	if err != nil {
		return authorizer.DecisionNoOpinion, "", err
	}
	switch {
	case result.Status.Allowed:
		return authorizer.DecisionAllow, result.Status.Reason, nil
	case result.Status.Denied:
		return authorizer.DecisionDeny, result.Status.Reason, nil
	}
	return authorizer.DecisionNoOpinion, result.Status.Reason, nil
}

// ------------------------------------------------------------------------------------------------ webhooks

type plugin interface {
	admission.MutationInterface
	admission.ValidationInterface
}

type server struct {
	plugin plugin
	alloc  *allocator
}

type reviewFunc func(ctx context.Context, req *admissionv1.AdmissionRequest) (*admissionv1.AdmissionResponse, error)

func (s *server) handle(review reviewFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, maxReviewBytes+1))
		if err != nil || len(body) > maxReviewBytes {
			http.Error(w, "unreadable or oversized AdmissionReview", http.StatusBadRequest)
			return
		}
		var in admissionv1.AdmissionReview
		if err := json.Unmarshal(body, &in); err != nil || in.Request == nil {
			http.Error(w, "not an AdmissionReview with a request", http.StatusBadRequest)
			return
		}
		resp, err := review(r.Context(), in.Request)
		if err != nil {
			resp = deny(err)
		}
		resp.UID = in.Request.UID
		out := admissionv1.AdmissionReview{TypeMeta: in.TypeMeta, Response: resp}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	}
}

func deny(err error) *admissionv1.AdmissionResponse {
	status := metav1.Status{Status: metav1.StatusFailure, Message: err.Error(), Code: http.StatusForbidden, Reason: metav1.StatusReasonForbidden}
	var apiStatus interface{ Status() metav1.Status }
	if errors.As(err, &apiStatus) {
		status = apiStatus.Status()
	}
	return &admissionv1.AdmissionResponse{Allowed: false, Result: &status}
}

// attributes converts a pod request into what an in-process admission plugin sees: internal objects.
func attributes(req *admissionv1.AdmissionRequest) (admission.Attributes, *coreapi.Pod, error) {
	pod, err := internalPod(req.Object.Raw)
	if err != nil {
		return nil, nil, err
	}
	var old runtime.Object
	if req.Operation == admissionv1.Update && len(req.OldObject.Raw) > 0 {
		oldPod, err := internalPod(req.OldObject.Raw)
		if err != nil {
			return nil, nil, err
		}
		old = oldPod
	}
	extra := map[string][]string{}
	for k, v := range req.UserInfo.Extra {
		extra[k] = v
	}
	userInfo := &user.DefaultInfo{Name: req.UserInfo.Username, UID: req.UserInfo.UID, Groups: req.UserInfo.Groups, Extra: extra}
	dryRun := req.DryRun != nil && *req.DryRun
	attrs := admission.NewAttributesRecord(pod, old, schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, req.Namespace, req.Name,
		schema.GroupVersionResource{Version: "v1", Resource: "pods"}, req.SubResource, admission.Operation(req.Operation), nil, dryRun, userInfo)
	return attrs, pod, nil
}

func internalPod(raw []byte) (*coreapi.Pod, error) {
	var external corev1.Pod
	if err := json.Unmarshal(raw, &external); err != nil {
		return nil, fmt.Errorf("decoding the pod: %w", err)
	}
	internal := &coreapi.Pod{}
	if err := legacyscheme.Scheme.Convert(&external, internal, nil); err != nil {
		return nil, fmt.Errorf("converting the pod: %w", err)
	}
	return internal, nil
}

func (s *server) mutatePod(ctx context.Context, req *admissionv1.AdmissionRequest) (*admissionv1.AdmissionResponse, error) {
	if req.Resource.Resource != "pods" {
		return &admissionv1.AdmissionResponse{Allowed: true}, nil
	}
	attrs, pod, err := attributes(req)
	if err != nil {
		return nil, err
	}
	// What the pod looks like after the conversion alone: only what the plugin changed is patched (an UPDATE must
	// not touch immutable fields, and most pods need no change).
	baseline, err := externalPod(pod)
	if err != nil {
		return nil, err
	}
	if err := s.plugin.Admit(ctx, attrs, nil); err != nil {
		return nil, err
	}
	mutated, err := externalPod(pod)
	if err != nil {
		return nil, err
	}
	var patch []map[string]interface{}
	if !equality.Semantic.DeepEqual(baseline.Spec, mutated.Spec) {
		patch = append(patch, map[string]interface{}{"op": "replace", "path": "/spec", "value": mutated.Spec})
	}
	if !equality.Semantic.DeepEqual(baseline.Annotations, mutated.Annotations) {
		op := "replace"
		if baseline.Annotations == nil {
			op = "add"
		}
		patch = append(patch, map[string]interface{}{"op": op, "path": "/metadata/annotations", "value": mutated.Annotations})
	}
	if len(patch) == 0 {
		return &admissionv1.AdmissionResponse{Allowed: true}, nil
	}
	return patchResponse(patch)
}

// externalPod converts a copy of an internal pod back to v1.
func externalPod(pod *coreapi.Pod) (*corev1.Pod, error) {
	out := &corev1.Pod{}
	if err := legacyscheme.Scheme.Convert(pod.DeepCopy(), out, nil); err != nil {
		return nil, fmt.Errorf("converting the pod back: %w", err)
	}
	return out, nil
}

func (s *server) validatePod(ctx context.Context, req *admissionv1.AdmissionRequest) (*admissionv1.AdmissionResponse, error) {
	if req.Resource.Resource != "pods" {
		return &admissionv1.AdmissionResponse{Allowed: true}, nil
	}
	attrs, _, err := attributes(req)
	if err != nil {
		return nil, err
	}
	if err := s.plugin.Validate(ctx, attrs, nil); err != nil {
		return nil, err
	}
	return &admissionv1.AdmissionResponse{Allowed: true}, nil
}

func (s *server) mutateNamespace(_ context.Context, req *admissionv1.AdmissionRequest) (*admissionv1.AdmissionResponse, error) {
	if req.Resource.Resource != "namespaces" || req.Operation != admissionv1.Create {
		return &admissionv1.AdmissionResponse{Allowed: true}, nil
	}
	var ns corev1.Namespace
	if err := json.Unmarshal(req.Object.Raw, &ns); err != nil {
		return nil, fmt.Errorf("decoding the namespace: %w", err)
	}
	if ns.Annotations[securityv1.UIDRangeAnnotation] != "" {
		return &admissionv1.AdmissionResponse{Allowed: true}, nil
	}
	annotations, err := s.alloc.reserve(ns.Name)
	if err != nil {
		return nil, err
	}
	merged := map[string]string{}
	for k, v := range ns.Annotations {
		merged[k] = v
	}
	for k, v := range annotations {
		merged[k] = v
	}
	op := "replace"
	if ns.Annotations == nil {
		op = "add"
	}
	return patchResponse([]map[string]interface{}{{"op": op, "path": "/metadata/annotations", "value": merged}})
}

// mutateSCC applies the library's SCC defaults: on OpenShift every SCC is defaulted when written, and the plugin
// refuses every pod while any SCC lacks, for example, an fsGroup strategy.
func (s *server) mutateSCC(_ context.Context, req *admissionv1.AdmissionRequest) (*admissionv1.AdmissionResponse, error) {
	if req.Resource.Resource != "securitycontextconstraints" {
		return &admissionv1.AdmissionResponse{Allowed: true}, nil
	}
	var scc securityv1.SecurityContextConstraints
	if err := json.Unmarshal(req.Object.Raw, &scc); err != nil {
		return nil, fmt.Errorf("decoding the SecurityContextConstraints: %w", err)
	}
	defaulted := scc.DeepCopy()
	sccdefaults.SetDefaults_SCC(defaulted)
	fields := []struct {
		path        string
		before, now interface{}
	}{
		{"/fsGroup", scc.FSGroup, defaulted.FSGroup},
		{"/supplementalGroups", scc.SupplementalGroups, defaulted.SupplementalGroups},
		{"/users", scc.Users, defaulted.Users},
		{"/groups", scc.Groups, defaulted.Groups},
		{"/volumes", scc.Volumes, defaulted.Volumes},
		{"/allowPrivilegeEscalation", scc.AllowPrivilegeEscalation, defaulted.AllowPrivilegeEscalation},
	}
	var patch []map[string]interface{}
	for _, f := range fields {
		if !equality.Semantic.DeepEqual(f.before, f.now) {
			patch = append(patch, map[string]interface{}{"op": "add", "path": f.path, "value": f.now})
		}
	}
	if len(patch) == 0 {
		return &admissionv1.AdmissionResponse{Allowed: true}, nil
	}
	return patchResponse(patch)
}

func patchResponse(patch interface{}) (*admissionv1.AdmissionResponse, error) {
	raw, err := json.Marshal(patch)
	if err != nil {
		return nil, err
	}
	patchType := admissionv1.PatchTypeJSONPatch
	return &admissionv1.AdmissionResponse{Allowed: true, Patch: raw, PatchType: &patchType}, nil
}

// ------------------------------------------------------------------------------------------------ allocation

type namespaceLister interface {
	List(selector labels.Selector) ([]*corev1.Namespace, error)
}

// allocator hands out UID blocks and MCS labels: the lowest block no namespace holds (or was promised during a
// namespace CREATE in flight). Namespaces that exist without the annotations (made before the webhook) get them by
// a patch.
type allocator struct {
	mu       sync.Mutex
	uids     *uid.Range
	lister   namespaceLister
	promised map[uint32]string
	pending  chan string
}

func newAllocator(lister namespaceLister) *allocator {
	r, err := uid.NewRange(uidRangeStart, uidRangeEnd, uidBlockSize)
	if err != nil {
		panic(err)
	}
	return &allocator{uids: r, lister: lister, promised: map[uint32]string{}, pending: make(chan string, 1024)}
}

func (a *allocator) reserve(name string) (map[string]string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	used := map[uint32]bool{}
	namespaces, err := a.lister.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	for _, ns := range namespaces {
		if ns.Name == name && ns.Annotations[securityv1.UIDRangeAnnotation] != "" {
			return nil, nil
		}
		if block, err := uid.ParseBlock(ns.Annotations[securityv1.UIDRangeAnnotation]); err == nil {
			if ok, offset := a.uids.Offset(block); ok {
				used[offset] = true
			}
		}
	}
	for offset, holder := range a.promised {
		if holder == name {
			return annotationsFor(a.uids, offset), nil
		}
		used[offset] = true
	}
	for offset := uint32(0); offset < a.uids.Size(); offset++ {
		if !used[offset] {
			a.promised[offset] = name
			return annotationsFor(a.uids, offset), nil
		}
	}
	return nil, fmt.Errorf("no free UID block left in %d-%d/%d", uidRangeStart, uidRangeEnd, uidBlockSize)
}

func annotationsFor(r *uid.Range, offset uint32) map[string]string {
	block, _ := r.BlockAt(offset)
	return map[string]string{
		securityv1.UIDRangeAnnotation:           block.String(),
		securityv1.SupplementalGroupsAnnotation: block.String(),
		securityv1.MCSAnnotation:                mcsLabel(offset),
	}
}

// mcsLabel names the offset-th pair of SELinux categories (c1,c0), (c2,c0), (c2,c1), (c3,c0), ... in OpenShift's
// "s0:cHIGH,cLOW" form.
func mcsLabel(offset uint32) string {
	high := uint32(1)
	for offset >= high {
		offset -= high
		high++
	}
	return fmt.Sprintf("s0:c%d,c%d", high, offset)
}

func (a *allocator) annotateLater(obj interface{}) {
	ns, ok := obj.(*corev1.Namespace)
	if !ok || ns.DeletionTimestamp != nil || ns.Annotations[securityv1.UIDRangeAnnotation] != "" {
		a.forget(obj)
		return
	}
	select {
	case a.pending <- ns.Name:
	default: // full: the next resync or update brings it back
	}
}

// forget drops the promise for a namespace whose annotations the informer now shows.
func (a *allocator) forget(obj interface{}) {
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for offset, holder := range a.promised {
		if holder == ns.Name {
			delete(a.promised, offset)
		}
	}
}

func (a *allocator) run(ctx context.Context, kube kubernetes.Interface, synced func() bool) {
	for !synced() {
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
	for {
		select {
		case <-ctx.Done():
			return
		case name := <-a.pending:
			annotations, err := a.reserve(name)
			if err != nil || annotations == nil {
				continue
			}
			patch, _ := json.Marshal(map[string]interface{}{"metadata": map[string]interface{}{"annotations": annotations}})
			if _, err := kube.CoreV1().Namespaces().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "sccadmission"}); err != nil {
				fmt.Fprintf(os.Stderr, "sccadmission: annotating namespace %s: %v\n", name, err)
			}
		}
	}
}
