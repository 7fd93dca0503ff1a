package v1

import (
	"fmt"
	"slices"
	"strings"

	"github.com/distribution/reference"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ReservedLabelKeys are the pod labels the operator sets to select an App's pods; users
// cannot override them.
var ReservedLabelKeys = sets.New(LabelInstance, LabelManagedBy)

// Validate returns every problem of an App, each naming its field. It checks what the CRD
// schema cannot: names usable as Service and label values, image references, references
// between fields, and the rules of the Kubernetes objects the App becomes.
func Validate(app *App) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1035Label(app.Name) {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), app.Name,
			"must be usable as a Service name and a label value: "+msg))
	}
	spec := field.NewPath("spec")
	s := &app.Spec
	errs = append(errs, validateImage(s.Image, spec.Child("image"))...)
	if s.Replicas != nil && *s.Replicas < 0 {
		errs = append(errs, field.Invalid(spec.Child("replicas"), *s.Replicas, "must be 0 or more"))
	}
	errs = append(errs, validateEnv(s.Env, spec.Child("env"))...)
	portNames := sets.New[string]()
	errs = append(errs, validatePorts(s.Ports, portNames, spec.Child("ports"))...)
	errs = append(errs, validateService(s.Service, portNames, spec.Child("service"))...)
	errs = append(errs, validateResources(s.Resources, spec.Child("resources"))...)
	errs = append(errs, validateProbes(s.Probes, portNames, spec.Child("probes"))...)
	errs = append(errs, validateAutoscaling(s.Autoscaling, spec.Child("autoscaling"))...)
	errs = append(errs, validateDisruptionBudget(s.DisruptionBudget, spec.Child("disruptionBudget"))...)
	errs = append(errs, validateRollout(s.Rollout, spec.Child("rollout"))...)
	if s.ServiceAccountName != "" {
		errs = append(errs, dnsSubdomain(s.ServiceAccountName, spec.Child("serviceAccountName"))...)
	}
	for i, ref := range s.ImagePullSecrets {
		errs = append(errs, dnsSubdomain(ref.Name, spec.Child("imagePullSecrets").Index(i).Child("name"))...)
	}
	errs = append(errs, metav1validation.ValidateLabels(s.NodeSelector, spec.Child("nodeSelector"))...)
	errs = append(errs, metav1validation.ValidateLabels(s.PodLabels, spec.Child("podLabels"))...)
	for key := range s.PodLabels {
		if ReservedLabelKeys.Has(key) {
			errs = append(errs, field.Forbidden(spec.Child("podLabels").Key(key),
				"is set by the operator to select the App's pods"))
		}
	}
	errs = append(errs, apivalidation.ValidateAnnotations(s.PodAnnotations, spec.Child("podAnnotations"))...)
	// Map fields are checked in map order; sort so that the same App always gets the same message.
	slices.SortStableFunc(errs, func(a, b *field.Error) int { return strings.Compare(a.Error(), b.Error()) })
	return errs
}

// Invalid is the API's refusal of an App, naming every field at fault: what the webhooks
// answer, and what the reconciler reports of an App stored without them.
func Invalid(name string, errs field.ErrorList) *apierrors.StatusError {
	return apierrors.NewInvalid(GroupVersion.WithKind("App").GroupKind(), name, errs)
}

func validateImage(image string, path *field.Path) field.ErrorList {
	if image == "" {
		return field.ErrorList{field.Required(path, "an image reference such as registry.example.com/team/app:1.2.3")}
	}
	if _, err := reference.ParseNormalizedNamed(image); err != nil {
		return field.ErrorList{field.Invalid(path, image, "not a valid image reference: "+err.Error())}
	}
	return nil
}

func validateEnv(env []corev1.EnvVar, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, e := range env {
		if e.Name == "" {
			errs = append(errs, field.Required(path.Index(i).Child("name"), ""))
		}
		if e.Value != "" && e.ValueFrom != nil {
			errs = append(errs, field.Invalid(path.Index(i).Child("valueFrom"), "", "may not be set together with value"))
		}
	}
	return errs
}

func validatePorts(ports []AppPort, names sets.Set[string], path *field.Path) field.ErrorList {
	var errs field.ErrorList
	type key struct {
		port     int32
		protocol corev1.Protocol
	}
	numbers := sets.New[key]()
	for i, p := range ports {
		pp := path.Index(i)
		for _, msg := range validation.IsValidPortName(p.Name) {
			errs = append(errs, field.Invalid(pp.Child("name"), p.Name, msg))
		}
		if names.Has(p.Name) {
			errs = append(errs, field.Duplicate(pp.Child("name"), p.Name))
		}
		names.Insert(p.Name)
		for _, msg := range validation.IsValidPortNum(int(p.ContainerPort)) {
			errs = append(errs, field.Invalid(pp.Child("containerPort"), p.ContainerPort, msg))
		}
		protocol := p.Protocol
		if protocol == "" {
			protocol = DefaultPortProtocol
		}
		if !sets.New(corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP).Has(protocol) {
			errs = append(errs, field.NotSupported(pp.Child("protocol"), p.Protocol, []string{"TCP", "UDP", "SCTP"}))
		}
		k := key{p.ContainerPort, protocol}
		if numbers.Has(k) {
			errs = append(errs, field.Duplicate(pp.Child("containerPort"), p.ContainerPort))
		}
		numbers.Insert(k)
	}
	return errs
}

func validateService(svc *ServiceSpec, portNames sets.Set[string], path *field.Path) field.ErrorList {
	if svc == nil {
		return nil
	}
	var errs field.ErrorList
	switch svc.Type {
	case "", corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer:
	default:
		errs = append(errs, field.NotSupported(path.Child("type"), svc.Type, []string{"ClusterIP", "NodePort", "LoadBalancer"}))
	}
	if svc.Port != 0 {
		for _, msg := range validation.IsValidPortNum(int(svc.Port)) {
			errs = append(errs, field.Invalid(path.Child("port"), svc.Port, msg))
		}
	}
	if svc.TargetPort != "" && len(portNames) > 0 && !portNames.Has(svc.TargetPort) {
		errs = append(errs, field.NotFound(path.Child("targetPort"), svc.TargetPort))
	}
	errs = append(errs, apivalidation.ValidateAnnotations(svc.Annotations, path.Child("annotations"))...)
	return errs
}

func validateResources(r *corev1.ResourceRequirements, path *field.Path) field.ErrorList {
	if r == nil {
		return nil
	}
	var errs field.ErrorList
	for name, q := range r.Requests {
		if q.Sign() < 0 {
			errs = append(errs, field.Invalid(path.Child("requests").Key(string(name)), q.String(), "must not be negative"))
		}
		if limit, ok := r.Limits[name]; ok && q.Cmp(limit) > 0 {
			errs = append(errs, field.Invalid(path.Child("requests").Key(string(name)), q.String(),
				fmt.Sprintf("must not exceed the limit %s", limit.String())))
		}
	}
	for name, q := range r.Limits {
		if q.Sign() < 0 {
			errs = append(errs, field.Invalid(path.Child("limits").Key(string(name)), q.String(), "must not be negative"))
		}
	}
	return errs
}

func validateProbes(p *Probes, portNames sets.Set[string], path *field.Path) field.ErrorList {
	if p == nil {
		return nil
	}
	var errs field.ErrorList
	errs = append(errs, validateProbe(p.Liveness, portNames, path.Child("liveness"))...)
	errs = append(errs, validateProbe(p.Readiness, portNames, path.Child("readiness"))...)
	errs = append(errs, validateProbe(p.Startup, portNames, path.Child("startup"))...)
	return errs
}

func validateProbe(p *corev1.Probe, portNames sets.Set[string], path *field.Path) field.ErrorList {
	if p == nil {
		return nil
	}
	var errs field.ErrorList
	var port *intstr.IntOrString
	handlers := 0
	if p.Exec != nil {
		handlers++
	}
	if p.HTTPGet != nil {
		handlers++
		port = &p.HTTPGet.Port
	}
	if p.TCPSocket != nil {
		handlers++
		port = &p.TCPSocket.Port
	}
	if p.GRPC != nil {
		handlers++
		port = &intstr.IntOrString{IntVal: p.GRPC.Port}
	}
	if handlers != 1 {
		errs = append(errs, field.Invalid(path, handlers, "must set exactly one of exec, httpGet, tcpSocket and grpc"))
	}
	if port != nil {
		if port.Type == intstr.String {
			if !portNames.Has(port.StrVal) {
				errs = append(errs, field.NotFound(path.Child("port"), port.StrVal))
			}
		} else {
			for _, msg := range validation.IsValidPortNum(int(port.IntVal)) {
				errs = append(errs, field.Invalid(path.Child("port"), port.IntVal, msg))
			}
		}
	}
	for _, f := range []struct {
		name  string
		value int32
	}{
		{"initialDelaySeconds", p.InitialDelaySeconds},
		{"timeoutSeconds", p.TimeoutSeconds},
		{"periodSeconds", p.PeriodSeconds},
		{"successThreshold", p.SuccessThreshold},
		{"failureThreshold", p.FailureThreshold},
	} {
		if f.value < 0 {
			errs = append(errs, field.Invalid(path.Child(f.name), f.value, "must not be negative"))
		}
	}
	return errs
}

func validateAutoscaling(a *AutoscalingSpec, path *field.Path) field.ErrorList {
	if a == nil {
		return nil
	}
	var errs field.ErrorList
	if a.MaxReplicas < 1 {
		errs = append(errs, field.Invalid(path.Child("maxReplicas"), a.MaxReplicas, "must be 1 or more"))
	}
	if a.MinReplicas != nil {
		if *a.MinReplicas < 1 {
			errs = append(errs, field.Invalid(path.Child("minReplicas"), *a.MinReplicas, "must be 1 or more"))
		} else if a.MaxReplicas >= 1 && *a.MinReplicas > a.MaxReplicas {
			errs = append(errs, field.Invalid(path.Child("minReplicas"), *a.MinReplicas,
				fmt.Sprintf("must not exceed maxReplicas (%d)", a.MaxReplicas)))
		}
	}
	if t := a.TargetCPUUtilizationPercentage; t != nil && (*t < 1 || *t > 1000) {
		errs = append(errs, field.Invalid(path.Child("targetCPUUtilizationPercentage"), *t, "must be between 1 and 1000"))
	}
	return errs
}

func validateDisruptionBudget(b *DisruptionBudgetSpec, path *field.Path) field.ErrorList {
	if b == nil {
		return nil
	}
	if (b.MinAvailable == nil) == (b.MaxUnavailable == nil) {
		return field.ErrorList{field.Invalid(path, "", "set exactly one of minAvailable and maxUnavailable")}
	}
	var errs field.ErrorList
	errs = append(errs, countOrPercent(b.MinAvailable, path.Child("minAvailable"))...)
	errs = append(errs, countOrPercent(b.MaxUnavailable, path.Child("maxUnavailable"))...)
	return errs
}

func validateRollout(r *RolloutSpec, path *field.Path) field.ErrorList {
	if r == nil {
		return nil
	}
	var errs field.ErrorList
	errs = append(errs, countOrPercent(r.MaxSurge, path.Child("maxSurge"))...)
	errs = append(errs, countOrPercent(r.MaxUnavailable, path.Child("maxUnavailable"))...)
	if isZero(r.MaxSurge) && isZero(r.MaxUnavailable) {
		errs = append(errs, field.Invalid(path.Child("maxUnavailable"), r.MaxUnavailable.String(),
			"may not be 0 when maxSurge is 0"))
	}
	if d := r.ProgressDeadlineSeconds; d != nil && *d < 1 {
		errs = append(errs, field.Invalid(path.Child("progressDeadlineSeconds"), *d, "must be 1 or more"))
	}
	return errs
}

// countOrPercent checks a value that is a non-negative count or a percentage such as "25%".
func countOrPercent(v *intstr.IntOrString, path *field.Path) field.ErrorList {
	if v == nil {
		return nil
	}
	if v.Type == intstr.Int {
		if v.IntVal < 0 {
			return field.ErrorList{field.Invalid(path, v.IntVal, "must be 0 or more")}
		}
		return nil
	}
	var pct int
	if _, err := fmt.Sscanf(v.StrVal, "%d%%", &pct); err != nil || fmt.Sprintf("%d%%", pct) != v.StrVal || pct < 0 || pct > 100 {
		return field.ErrorList{field.Invalid(path, v.StrVal, "must be a count or a percentage from 0% to 100%")}
	}
	return nil
}

func isZero(v *intstr.IntOrString) bool {
	return v != nil && ((v.Type == intstr.Int && v.IntVal == 0) || (v.Type == intstr.String && v.StrVal == "0%"))
}

func dnsSubdomain(name string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(name) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	return errs
}

// Warnings returns advice about an App that is valid but probably not what its author meant.
func Warnings(app *App) []string {
	var w []string
	s := &app.Spec
	if s.Autoscaling != nil && s.Replicas != nil && *s.Replicas != DefaultReplicas {
		w = append(w, "spec.replicas is ignored while spec.autoscaling is set: the HorizontalPodAutoscaler owns the replica count")
	}
	if sc := s.SecurityContext; sc != nil {
		if sc.Pod != nil && sc.Pod.RunAsNonRoot != nil && !*sc.Pod.RunAsNonRoot {
			w = append(w, "spec.securityContext.pod.runAsNonRoot=false fails the restricted Pod Security Standard")
		}
		if c := sc.Container; c != nil {
			if c.Privileged != nil && *c.Privileged {
				w = append(w, "spec.securityContext.container.privileged=true fails the restricted Pod Security Standard")
			}
			if c.AllowPrivilegeEscalation != nil && *c.AllowPrivilegeEscalation {
				w = append(w, "spec.securityContext.container.allowPrivilegeEscalation=true fails the restricted Pod Security Standard")
			}
		}
	}
	if s.Autoscaling != nil && (s.Resources == nil || s.Resources.Requests.Cpu().IsZero()) {
		w = append(w, "spec.autoscaling targets CPU utilization, which needs spec.resources.requests.cpu")
	}
	return w
}
