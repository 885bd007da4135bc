import {
  buildSchema,
  Kind,
  OperationTypeNode,
  getNamedType,
  isLeafType,
  isObjectType,
  isAbstractType,
  type FragmentDefinitionNode,
  type GraphQLObjectType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValueNode,
} from 'graphql';

// The part of Shopify's GraphQL Admin API schema (2026-10) that casework's queries and mutations
// touch, with Shopify's own type, field, argument and enum names (shopify.dev/docs/api/admin-graphql),
// so the stand-in refuses any field, argument or input Shopify would not accept here, and the
// calculated query cost Shopify documents ("GraphQL Admin API rate limits"): scalars and enums
// cost 0, an object 1, a connection or list taking `first` 2 plus `first` times what each item
// selects, a mutation 10; a single query may cost at most 1,000.

export const STANDIN_SDL = /* GraphQL */ `
  directive @idempotent(key: String!) on FIELD

  scalar DateTime
  scalar Decimal
  scalar Money
  scalar UnsignedInt64
  scalar URL

  enum CurrencyCode {
    AUD
    CAD
    CHF
    DKK
    EUR
    GBP
    JPY
    KWD
    NOK
    NZD
    SEK
    USD
  }
  enum OrderDisplayFinancialStatus {
    AUTHORIZED
    EXPIRED
    PAID
    PARTIALLY_PAID
    PARTIALLY_REFUNDED
    PENDING
    REFUNDED
    VOIDED
  }
  enum OrderDisplayFulfillmentStatus {
    FULFILLED
    IN_PROGRESS
    ON_HOLD
    OPEN
    PARTIALLY_FULFILLED
    PENDING_FULFILLMENT
    REQUEST_DECLINED
    RESTOCKED
    SCHEDULED
    UNFULFILLED
  }
  enum FulfillmentDisplayStatus {
    ATTEMPTED_DELIVERY
    CANCELED
    CARRIER_PICKED_UP
    CONFIRMED
    DELAYED
    DELIVERED
    FAILURE
    FULFILLED
    IN_TRANSIT
    LABEL_PRINTED
    LABEL_PURCHASED
    LABEL_VOIDED
    MARKED_AS_FULFILLED
    NOT_DELIVERED
    OUT_FOR_DELIVERY
    PICKED_UP
    READY_FOR_PICKUP
    SUBMITTED
  }
  enum OrderTransactionKind {
    AUTHORIZATION
    CAPTURE
    CHANGE
    EMV_AUTHORIZATION
    REFUND
    SALE
    SUGGESTED_REFUND
    VOID
  }
  enum OrderTransactionStatus {
    AWAITING_RESPONSE
    ERROR
    FAILURE
    PENDING
    SUCCESS
    UNKNOWN
  }
  enum OrderTransactionErrorCode {
    AMAZON_PAYMENTS_INVALID_PAYMENT_METHOD
    CALL_ISSUER
    CARD_DECLINED
    CONFIG_ERROR
    EXPIRED_CARD
    GENERIC_ERROR
    INCORRECT_ADDRESS
    INCORRECT_CVC
    INCORRECT_NUMBER
    INCORRECT_PIN
    INCORRECT_ZIP
    INVALID_AMOUNT
    INVALID_COUNTRY
    INVALID_CVC
    INVALID_EXPIRY_DATE
    INVALID_NUMBER
    PAYMENT_METHOD_UNAVAILABLE
    PICK_UP_CARD
    PROCESSING_ERROR
    TEST_MODE_LIVE_CARD
    UNSUPPORTED_FEATURE
  }
  enum OrderSortKeys {
    CREATED_AT
    CUSTOMER_NAME
    FINANCIAL_STATUS
    FULFILLMENT_STATUS
    ID
    NUMBER
    ORDER_NUMBER
    PROCESSED_AT
    RELEVANCE
    TOTAL_PRICE
    UPDATED_AT
  }

  interface Node {
    id: ID!
  }

  type PageInfo {
    hasNextPage: Boolean!
    hasPreviousPage: Boolean!
    startCursor: String
    endCursor: String
  }
  type MoneyV2 {
    amount: Decimal!
    currencyCode: CurrencyCode!
  }
  type MoneyBag {
    shopMoney: MoneyV2!
    presentmentMoney: MoneyV2!
  }
  type MailingAddress {
    address1: String
    address2: String
    city: String
    province: String
    zip: String
    country: String
    latitude: Float
    longitude: Float
  }

  type Customer implements Node {
    id: ID!
    numberOfOrders: UnsignedInt64!
    orders(first: Int, after: String, last: Int, before: String, reverse: Boolean, sortKey: OrderSortKeys, query: String): OrderConnection!
  }

  type Order implements Node {
    id: ID!
    name: String!
    createdAt: DateTime!
    cancelledAt: DateTime
    note: String
    currencyCode: CurrencyCode!
    displayFinancialStatus: OrderDisplayFinancialStatus
    displayFulfillmentStatus: OrderDisplayFulfillmentStatus!
    customer: Customer
    totalPriceSet: MoneyBag!
    shippingAddress: MailingAddress
    lineItems(first: Int, after: String, last: Int, before: String, reverse: Boolean): LineItemConnection!
    fulfillments(first: Int): [Fulfillment!]!
    transactions(first: Int, capturable: Boolean, manuallyResolvable: Boolean): [OrderTransaction!]!
    refunds(first: Int): [Refund!]!
  }
  type OrderEdge {
    cursor: String!
    node: Order!
  }
  type OrderConnection {
    edges: [OrderEdge!]!
    nodes: [Order!]!
    pageInfo: PageInfo!
  }

  type LineItem implements Node {
    id: ID!
    name: String!
    quantity: Int!
    originalUnitPriceSet: MoneyBag!
  }
  type LineItemConnection {
    nodes: [LineItem!]!
    pageInfo: PageInfo!
  }

  type FulfillmentTrackingInfo {
    company: String
    number: String
    url: URL
  }
  type Fulfillment implements Node {
    id: ID!
    createdAt: DateTime!
    displayStatus: FulfillmentDisplayStatus
    trackingInfo(first: Int): [FulfillmentTrackingInfo!]!
  }

  type OrderTransaction implements Node {
    id: ID!
    kind: OrderTransactionKind!
    status: OrderTransactionStatus!
    gateway: String
    createdAt: DateTime!
    processedAt: DateTime
    errorCode: OrderTransactionErrorCode
    amountSet: MoneyBag!
    parentTransaction: OrderTransaction
    order: Order
  }
  type OrderTransactionConnection {
    nodes: [OrderTransaction!]!
    pageInfo: PageInfo!
  }

  type Refund implements Node {
    id: ID!
    createdAt: DateTime
    note: String
    totalRefundedSet: MoneyBag!
    transactions(first: Int, after: String, last: Int, before: String, reverse: Boolean): OrderTransactionConnection!
  }

  type UserError {
    field: [String!]
    message: String!
  }
  type RefundCreatePayload {
    order: Order
    refund: Refund
    userErrors: [UserError!]!
  }

  input OrderTransactionInput {
    amount: Money!
    gateway: String!
    kind: OrderTransactionKind!
    orderId: ID!
    parentId: ID
  }
  input RefundInput {
    orderId: ID!
    note: String
    notify: Boolean
    currency: CurrencyCode
    processedAt: DateTime
    allowOverRefunding: Boolean
    transactions: [OrderTransactionInput!]
  }

  type QueryRoot {
    order(id: ID!): Order
    orders(first: Int, after: String, last: Int, before: String, reverse: Boolean, sortKey: OrderSortKeys, query: String): OrderConnection!
    customer(id: ID!): Customer
    node(id: ID!): Node
  }
  type Mutation {
    refundCreate(input: RefundInput!): RefundCreatePayload
  }

  schema {
    query: QueryRoot
    mutation: Mutation
  }
`;

/** The stand-in's schema. */
export const STANDIN_SCHEMA: GraphQLSchema = buildSchema(STANDIN_SDL);

/** Shopify's ceiling on one query's requested cost. */
export const MAX_QUERY_COST = 1_000;
/** What one mutation costs. */
export const MUTATION_COST = 10;

function intArgument(value: ValueNode | undefined, variables: Record<string, unknown>): number | undefined {
  if (!value) return undefined;
  if (value.kind === Kind.INT) return Number(value.value);
  if (value.kind === Kind.VARIABLE) {
    const v = variables[value.name.value];
    return typeof v === 'number' ? v : undefined;
  }
  return undefined;
}

function selectionCost(
  schema: GraphQLSchema,
  type: GraphQLObjectType,
  set: SelectionSetNode,
  variables: Record<string, unknown>,
  fragments: Map<string, FragmentDefinitionNode>,
): number {
  let cost = 0;
  for (const selection of set.selections) {
    if (selection.kind === Kind.INLINE_FRAGMENT || selection.kind === Kind.FRAGMENT_SPREAD) {
      const fragment = selection.kind === Kind.FRAGMENT_SPREAD ? fragments.get(selection.name.value) : selection;
      const on = fragment?.typeCondition ? schema.getType(fragment.typeCondition.name.value) : type;
      if (fragment && on && isObjectType(on)) cost += selectionCost(schema, on, fragment.selectionSet, variables, fragments);
      continue;
    }
    const field = type.getFields()[selection.name.value];
    if (!field) continue;
    const named = getNamedType(field.type);
    if (isLeafType(named) || !selection.selectionSet) continue;
    // An interface (node) costs as the most expensive of its possible selections.
    const objects = isAbstractType(named) ? schema.getPossibleTypes(named) : isObjectType(named) ? [named] : [];
    const inner = Math.max(0, ...objects.map((o) => selectionCost(schema, o, selection.selectionSet!, variables, fragments)));
    const first = intArgument(selection.arguments?.find((a) => a.name.value === 'first')?.value, variables);
    cost += first !== undefined ? 2 + first * inner : 1 + inner;
  }
  return cost;
}

function actualSelectionCost(
  schema: GraphQLSchema,
  type: GraphQLObjectType,
  set: SelectionSetNode,
  data: Record<string, unknown> | null,
  variables: Record<string, unknown>,
  fragments: Map<string, FragmentDefinitionNode>,
): number {
  if (!data) return 0;
  let cost = 0;
  for (const selection of set.selections) {
    if (selection.kind === Kind.INLINE_FRAGMENT || selection.kind === Kind.FRAGMENT_SPREAD) {
      const fragment = selection.kind === Kind.FRAGMENT_SPREAD ? fragments.get(selection.name.value) : selection;
      const on = fragment?.typeCondition ? schema.getType(fragment.typeCondition.name.value) : type;
      if (fragment && on && isObjectType(on) && (!fragment.typeCondition || data.__typename === undefined || data.__typename === on.name)) {
        cost += actualSelectionCost(schema, on, fragment.selectionSet, data, variables, fragments);
      }
      continue;
    }
    const field = type.getFields()[selection.name.value];
    const value = data[selection.alias?.value ?? selection.name.value];
    if (!field || !selection.selectionSet || value === null || value === undefined) continue;
    const named = getNamedType(field.type);
    if (isLeafType(named)) continue;
    const objects = isAbstractType(named) ? schema.getPossibleTypes(named) : isObjectType(named) ? [named] : [];
    const costOf = (item: unknown) =>
      Math.max(0, ...objects.map((o) => actualSelectionCost(schema, o, selection.selectionSet!, item as Record<string, unknown>, variables, fragments)));
    const hasFirst = selection.arguments?.some((a) => a.name.value === 'first');
    if (Array.isArray(value)) cost += (hasFirst ? 2 : 0) + value.reduce((sum: number, item) => sum + costOf(item), 0);
    else cost += (hasFirst ? 2 : 1) + costOf(value);
  }
  return cost;
}

/**
 * What an operation actually cost, from what it returned: a connection or list is charged for
 * the items it held rather than the `first` it asked for. Shopify refunds the difference.
 */
export function actualCost(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  fragments: Map<string, FragmentDefinitionNode>,
  variables: Record<string, unknown>,
  data: Record<string, unknown> | null | undefined,
): number {
  if (operation.operation === OperationTypeNode.MUTATION) return MUTATION_COST * operation.selectionSet.selections.length;
  return actualSelectionCost(schema, schema.getQueryType()!, operation.selectionSet, data ?? null, variables, fragments);
}

/** The requested cost of an operation, as Shopify calculates it before running it. */
export function requestedCost(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  fragments: Map<string, FragmentDefinitionNode>,
  variables: Record<string, unknown>,
): number {
  if (operation.operation === OperationTypeNode.MUTATION) return MUTATION_COST * operation.selectionSet.selections.length;
  const root = schema.getQueryType()!;
  return selectionCost(schema, root, operation.selectionSet, variables, fragments);
}
