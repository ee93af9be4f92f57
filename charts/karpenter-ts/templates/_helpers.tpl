{{/*
Names and labels. The value keys and what they mean are those of Karpenter's chart (docs/chart.md lists
each), so a values file written for Karpenter renders the same objects here.
*/}}

{{/* The app name: nameOverride, else the chart's name; 63 characters at most (a DNS label). */}}
{{- define "karpenter-ts.name" -}}
{{- .Values.nameOverride | default .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The name of every object: fullnameOverride; else the release name when it already contains the app name
(release "karpenter-ts" gives "karpenter-ts"); else "<release>-<app name>".
*/}}
{{- define "karpenter-ts.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $app := include "karpenter-ts.name" . }}
{{- if contains $app .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $app | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* The labels a Deployment selects its pods by (and the Service, the PDB and the default spreads). */}}
{{- define "karpenter-ts.selectorLabels" -}}
app.kubernetes.io/name: {{ include "karpenter-ts.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The labels of every object: chart, selector, version, manager and additionalLabels. */}}
{{- define "karpenter-ts.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "karpenter-ts.selectorLabels" . }}
{{- with .Chart.AppVersion }}
app.kubernetes.io/version: {{ . | quote }}
{{- end }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- with .Values.additionalLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* metadata.labels and, when additionalAnnotations is set, metadata.annotations (indented for metadata). */}}
{{- define "karpenter-ts.metadata" -}}
labels:
  {{- include "karpenter-ts.labels" . | nindent 2 }}
{{- with .Values.additionalAnnotations }}
annotations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* The ServiceAccount the controller runs as: serviceAccount.name, else the full name (or "default" when the chart creates none). */}}
{{- define "karpenter-ts.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- .Values.serviceAccount.name | default (include "karpenter-ts.fullname" .) }}
{{- else }}
{{- .Values.serviceAccount.name | default "default" }}
{{- end }}
{{- end }}

{{/* repository:tag (tag defaults to the chart's appVersion), with @digest when one is given. */}}
{{- define "karpenter-ts.image" -}}
{{- $image := printf "%s:%s" .Values.controller.image.repository (.Values.controller.image.tag | default .Chart.AppVersion | toString) }}
{{- with .Values.controller.image.digest }}
{{- $image = printf "%s@%s" $image . }}
{{- end }}
{{- $image }}
{{- end }}

{{- define "karpenter-ts.containerName" -}}
{{- .Values.controller.containerName | default "controller" }}
{{- end }}

{{/* A settings value as an env value: rendered with tpl (so it may refer to the release), then quoted. */}}
{{- define "karpenter-ts.setting" -}}
{{- tpl (toString .value) .root | quote }}
{{- end }}

{{/* A pod-affinity term with the selector labels as its labelSelector when it names none. */}}
{{- define "karpenter-ts.selectingTerm" -}}
{{- $term := deepCopy .term }}
{{- if not (hasKey $term "labelSelector") }}
{{- $_ := set $term "labelSelector" (dict "matchLabels" (include "karpenter-ts.selectorLabels" .root | fromYaml)) }}
{{- end }}
{{- toJson $term }}
{{- end }}

{{/*
affinity, with every podAffinity/podAntiAffinity term that names no labelSelector selecting this chart's
pods (required terms directly, preferred ones in their podAffinityTerm).
*/}}
{{- define "karpenter-ts.affinity" -}}
{{- $affinity := deepCopy .Values.affinity }}
{{- range $kind := list "podAffinity" "podAntiAffinity" }}
{{- with get $affinity $kind }}
{{- $required := list }}
{{- range .requiredDuringSchedulingIgnoredDuringExecution }}
{{- $required = append $required (include "karpenter-ts.selectingTerm" (dict "term" . "root" $) | fromJson) }}
{{- end }}
{{- if $required }}
{{- $_ := set . "requiredDuringSchedulingIgnoredDuringExecution" $required }}
{{- end }}
{{- $preferred := list }}
{{- range .preferredDuringSchedulingIgnoredDuringExecution }}
{{- $weighted := deepCopy . }}
{{- $_ := set $weighted "podAffinityTerm" (include "karpenter-ts.selectingTerm" (dict "term" .podAffinityTerm "root" $) | fromJson) }}
{{- $preferred = append $preferred $weighted }}
{{- end }}
{{- if $preferred }}
{{- $_ := set . "preferredDuringSchedulingIgnoredDuringExecution" $preferred }}
{{- end }}
{{- end }}
{{- end }}
{{- toYaml $affinity }}
{{- end }}

{{/* topologySpreadConstraints, each without a labelSelector selecting this chart's pods. */}}
{{- define "karpenter-ts.topologySpreadConstraints" -}}
{{- $constraints := list }}
{{- range .Values.topologySpreadConstraints }}
{{- $constraints = append $constraints (include "karpenter-ts.selectingTerm" (dict "term" . "root" $) | fromJson) }}
{{- end }}
{{- toYaml $constraints }}
{{- end }}
