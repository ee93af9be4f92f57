import { describe, expect, it } from 'vitest';
import { aliasParameters, parseAlias, variantRequirements } from './ami-alias.ts';

const paths = (alias: string, k8s: string) =>
  aliasParameters(parseAlias(alias), k8s).map((p) => `${p.arch} ${p.variants.join('+')} ${p.path}`);

describe('AMI alias parameters', () => {
  it('al2023@latest reads the recommended image per arch and variant (neuron on x86_64 only)', () => {
    expect(paths('al2023@latest', '1.31')).toEqual([
      'x86_64 standard /aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/standard/recommended/image_id',
      'x86_64 nvidia /aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/nvidia/recommended/image_id',
      'x86_64 neuron /aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/neuron/recommended/image_id',
      'arm64 standard /aws/service/eks/optimized-ami/1.31/amazon-linux-2023/arm64/standard/recommended/image_id',
      'arm64 nvidia /aws/service/eks/optimized-ami/1.31/amazon-linux-2023/arm64/nvidia/recommended/image_id',
    ]);
  });

  it('a pinned al2023 version names the release image', () => {
    expect(paths('al2023@v20240625', '1.30')[0]).toBe(
      'x86_64 standard /aws/service/eks/optimized-ami/1.30/amazon-linux-2023/x86_64/standard/amazon-eks-node-al2023-x86_64-standard-1.30-v20240625/image_id',
    );
  });

  it('al2 reads the plain, arm64 and gpu images, latest or pinned', () => {
    expect(paths('al2@latest', '1.29')).toEqual([
      'x86_64 standard /aws/service/eks/optimized-ami/1.29/amazon-linux-2/recommended/image_id',
      'arm64 standard /aws/service/eks/optimized-ami/1.29/amazon-linux-2-arm64/recommended/image_id',
      'x86_64 nvidia+neuron /aws/service/eks/optimized-ami/1.29/amazon-linux-2-gpu/recommended/image_id',
    ]);
    expect(paths('al2@v20240703', '1.29')).toEqual([
      'x86_64 standard /aws/service/eks/optimized-ami/1.29/amazon-linux-2/amazon-eks-node-1.29-v20240703/image_id',
      'arm64 standard /aws/service/eks/optimized-ami/1.29/amazon-linux-2-arm64/amazon-eks-arm64-node-1.29-v20240703/image_id',
      'x86_64 nvidia+neuron /aws/service/eks/optimized-ami/1.29/amazon-linux-2-gpu/amazon-eks-gpu-node-1.29-v20240703/image_id',
    ]);
  });

  it('refuses al2 on Kubernetes 1.33 and later', () => {
    expect(() => paths('al2@latest', '1.33')).toThrow(/1\.33.*al2023/);
    expect(() => paths('al2@latest', '1.34')).toThrow();
  });

  it('bottlerocket reads standard and nvidia per arch; a pinned version drops the v', () => {
    expect(paths('bottlerocket@latest', '1.31')).toEqual([
      'x86_64 standard /aws/service/bottlerocket/aws-k8s-1.31/x86_64/latest/image_id',
      'arm64 standard /aws/service/bottlerocket/aws-k8s-1.31/arm64/latest/image_id',
      'x86_64 nvidia /aws/service/bottlerocket/aws-k8s-1.31-nvidia/x86_64/latest/image_id',
      'arm64 nvidia /aws/service/bottlerocket/aws-k8s-1.31-nvidia/arm64/latest/image_id',
    ]);
    expect(paths('bottlerocket@v1.20.3', '1.31')[0]).toBe(
      'x86_64 standard /aws/service/bottlerocket/aws-k8s-1.31/x86_64/1.20.3/image_id',
    );
  });

  it('windows reads the EKS-optimized Core image; 2025 needs Kubernetes 1.35', () => {
    expect(paths('windows2019@latest', '1.31')).toEqual([
      'x86_64 standard /aws/service/ami-windows-latest/Windows_Server-2019-English-Core-EKS_Optimized-1.31/image_id',
    ]);
    expect(paths('windows2022@latest', '1.31')).toEqual([
      'x86_64 standard /aws/service/ami-windows-latest/Windows_Server-2022-English-Core-EKS_Optimized-1.31/image_id',
    ]);
    expect(paths('windows2025@latest', '1.35')).toEqual([
      'x86_64 standard /aws/service/ami-windows-latest/Windows_Server-2025-English-Core-EKS_Optimized-1.35/image_id',
    ]);
    expect(() => paths('windows2025@latest', '1.34')).toThrow(/1\.35/);
  });

  it('rejects unknown families and pinned windows versions with the field name', () => {
    expect(() => parseAlias('ubuntu@latest')).toThrow(/spec\.amiSelectorTerms\[0\]\.alias/);
    expect(() => parseAlias('windows2022@v1')).toThrow(/only @latest/);
  });
});

describe('variant requirements', () => {
  it('standard excludes GPUs and accelerators; nvidia needs a GPU; neuron an accelerator', () => {
    expect(variantRequirements('x86_64', 'standard')).toEqual([
      { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
      { key: 'karpenter.k8s.aws/instance-gpu-count', operator: 'DoesNotExist' },
      { key: 'karpenter.k8s.aws/instance-accelerator-count', operator: 'DoesNotExist' },
    ]);
    expect(variantRequirements('arm64', 'nvidia')).toContainEqual({
      key: 'karpenter.k8s.aws/instance-gpu-count',
      operator: 'Exists',
    });
    expect(variantRequirements('x86_64', 'neuron')).toContainEqual({
      key: 'karpenter.k8s.aws/instance-accelerator-count',
      operator: 'Exists',
    });
  });

  it('windows images require the windows OS and build', () => {
    expect(variantRequirements('x86_64', 'standard', 'Windows2022')).toContainEqual({
      key: 'node.kubernetes.io/windows-build',
      operator: 'In',
      values: ['10.0.20348'],
    });
  });
});
