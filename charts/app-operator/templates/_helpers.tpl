{{/* The prefix of every object's name: the release's name, with app-operator in it. */}}
{{- define "app-operator.fullname" -}}
{{- if contains "app-operator" .Release.Name -}}
{{- .Release.Name | trunc 52 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-app-operator" .Release.Name | trunc 52 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* The labels the manager's pods are selected by: the bundle's, and the release's. */}}
{{- define "app-operator.selectorLabels" -}}
control-plane: controller-manager
app.kubernetes.io/name: app-operator
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "app-operator.labels" -}}
app.kubernetes.io/name: app-operator
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "app-operator.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default (printf "v%s" .Chart.AppVersion) }}
{{- end -}}
{{- end -}}

{{- define "app-operator.serviceAccount" -}}{{ include "app-operator.fullname" . }}-controller-manager{{- end -}}
{{- define "app-operator.webhookService" -}}{{ include "app-operator.fullname" . }}-webhook-service{{- end -}}
{{- define "app-operator.metricsService" -}}{{ include "app-operator.fullname" . }}-controller-manager-metrics-service{{- end -}}
{{- define "app-operator.tlsSecret" -}}{{ include "app-operator.fullname" . }}-serving-cert{{- end -}}
{{- define "app-operator.certificate" -}}{{ include "app-operator.fullname" . }}-serving-cert{{- end -}}

{{/* The names the serving certificate is valid for: both Services, as clients dial them. */}}
{{- define "app-operator.dnsNames" -}}
{{- $ns := .Release.Namespace -}}
{{- range $svc := list (include "app-operator.webhookService" .) (include "app-operator.metricsService" .) }}
- {{ $svc }}.{{ $ns }}.svc
- {{ $svc }}.{{ $ns }}.svc.cluster.local
{{- end }}
{{- end -}}

{{/*
The CA bundle the API server trusts the webhooks with, for certificates.source=chart: the CA
of the serving certificate this render makes or keeps (app-operator.tls), and, right after a
rotation, the CA before it too.
*/}}
{{- define "app-operator.caBundle" -}}
{{- $tls := include "app-operator.tls" . | fromYaml -}}
{{- $tls.caBundle -}}
{{- end -}}

{{/*
The serving certificate for certificates.source=chart, as YAML: tls.crt, tls.key, ca.crt and
caBundle. It keeps the certificate of the installed release (its Secret), unless there is none
or certificates.rotate is set; then it makes a new CA and certificate. Made once per render and
cached in .Values, so that the Secret and every caBundle agree.
*/}}
{{- define "app-operator.tls" -}}
{{- if not (hasKey .Values "_tls") -}}
{{- $existing := lookup "v1" "Secret" .Release.Namespace (include "app-operator.tlsSecret" .) -}}
{{- $old := "" -}}
{{- if and $existing $existing.data -}}{{- $old = index $existing.data "ca.crt" | default "" | b64dec -}}{{- end -}}
{{- $tls := dict -}}
{{- if and $old (not .Values.certificates.rotate) -}}
{{- $tls = dict "crt" (index $existing.data "tls.crt" | b64dec) "key" (index $existing.data "tls.key" | b64dec) "ca" $old "caBundle" ($old | b64enc) -}}
{{- else -}}
{{- $days := int .Values.certificates.validityDays -}}
{{- $ca := genCA (printf "%s-ca" (include "app-operator.fullname" .)) $days -}}
{{- $cert := genSignedCert (include "app-operator.webhookService" .) nil (include "app-operator.dnsNames" . | fromYamlArray) $days $ca -}}
{{- $tls = dict "crt" $cert.Cert "key" $cert.Key "ca" $ca.Cert "caBundle" (printf "%s%s" $ca.Cert $old | b64enc) -}}
{{- end -}}
{{- $_ := set .Values "_tls" $tls -}}
{{- end -}}
{{- toYaml (get .Values "_tls") -}}
{{- end -}}

{{/* Annotations that let cert-manager's CA injector fill in the caBundle. */}}
{{- define "app-operator.injectCA" -}}
{{- if eq .Values.certificates.source "cert-manager" }}
cert-manager.io/inject-ca-from: {{ .Release.Namespace }}/{{ include "app-operator.certificate" . }}
{{- end }}
{{- end -}}

{{- define "app-operator.containerSecurityContext" -}}
readOnlyRootFilesystem: true
allowPrivilegeEscalation: false
capabilities:
  drop:
  - ALL
{{- end -}}
