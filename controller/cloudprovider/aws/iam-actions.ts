// The IAM actions behind each port method (sdk.ts). deploy/iam/controller-policy.json must allow all of them;
// test/deploy/iam.test.ts checks it, and that every port method is listed here.

export const IAM_ACTIONS = {
  ec2: {
    describeInstanceTypes: ['ec2:DescribeInstanceTypes'],
    describeInstanceTypeOfferings: ['ec2:DescribeInstanceTypeOfferings'],
    describeSpotPriceHistory: ['ec2:DescribeSpotPriceHistory'],
    describeSubnets: ['ec2:DescribeSubnets'],
    describeSecurityGroups: ['ec2:DescribeSecurityGroups'],
    describeImages: ['ec2:DescribeImages'],
    describeCapacityReservations: ['ec2:DescribeCapacityReservations'],
    describeLaunchTemplate: ['ec2:DescribeLaunchTemplates'],
    describeLaunchTemplates: ['ec2:DescribeLaunchTemplates'],
    // Tags are applied at creation, which needs ec2:CreateTags with ec2:CreateAction=CreateLaunchTemplate.
    createLaunchTemplate: ['ec2:CreateLaunchTemplate', 'ec2:CreateTags'],
    deleteLaunchTemplate: ['ec2:DeleteLaunchTemplate'],
    // An instant fleet launches through RunInstances (and passes the node role through the instance profile).
    createFleet: ['ec2:CreateFleet', 'ec2:RunInstances', 'ec2:CreateTags', 'iam:PassRole'],
    describeInstances: ['ec2:DescribeInstances'],
    terminateInstances: ['ec2:TerminateInstances'],
    createTags: ['ec2:CreateTags'],
  },
  ssm: { getParameter: ['ssm:GetParameter'] },
  iam: {
    getInstanceProfile: ['iam:GetInstanceProfile'],
    listInstanceProfiles: ['iam:ListInstanceProfiles'],
    createInstanceProfile: ['iam:CreateInstanceProfile', 'iam:TagInstanceProfile'],
    addRoleToInstanceProfile: ['iam:AddRoleToInstanceProfile', 'iam:PassRole'],
    removeRoleFromInstanceProfile: ['iam:RemoveRoleFromInstanceProfile'],
    deleteInstanceProfile: ['iam:DeleteInstanceProfile'],
  },
  sqs: {
    getQueueUrl: ['sqs:GetQueueUrl'],
    receiveMessages: ['sqs:ReceiveMessage'],
    deleteMessage: ['sqs:DeleteMessage'],
  },
  pricing: { getProducts: ['pricing:GetProducts'] },
} as const;
