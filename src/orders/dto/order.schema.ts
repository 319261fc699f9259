import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { TIME } from '../../docs/openapi';
import { ORDER_STATUSES } from './order-request';

@ApiSchema({ name: 'OrderLine' })
export class OrderLineSchema {
  @ApiProperty({ example: 'sku-42' }) productId!: string;
  @ApiProperty({ type: 'integer', example: 1 }) quantity!: number;
  @ApiProperty({ type: 'integer', example: 1990, description: "In the currency's minor unit." })
  amount!: number;
}

@ApiSchema({ name: 'OrderAttribution' })
export class OrderAttributionSchema {
  @ApiProperty({
    type: 'string',
    nullable: true,
    example: 'conv_4Lr0BZ9yJm2WQhV6sT1nXe',
    description: 'The conversation credited with the order (outcomes-v1 §2), or null.',
  })
  conversationId!: string | null;
  @ApiProperty({
    type: 'string',
    enum: ['direct', 'assisted'],
    nullable: true,
    description:
      "direct: a line's product was shown on a product card of the conversation; assisted: it was not; null with no credit.",
  })
  kind!: 'direct' | 'assisted' | null;
}

@ApiSchema({
  name: 'Order',
  description:
    "An order of the shop (outcomes-v1 §1). visitorId and conversationIds are inputs and never returned. updatedAt moves only when the shop's PUT changes the order.",
})
export class OrderSchema {
  @ApiProperty({ example: 'ord_3hT9aQ0cX2mR1vB8nK5wZp' }) id!: string;
  @ApiProperty({ example: 'SHOP-10045' }) externalId!: string;
  @ApiProperty() siteId!: string;
  @ApiProperty(TIME) placedAt!: string;
  @ApiProperty({ example: 'EUR' }) currency!: string;
  @ApiProperty({ type: 'integer', example: 1990 }) total!: number;
  @ApiProperty({ type: 'integer', example: 0 }) refunded!: number;
  @ApiProperty({ type: 'integer', example: 1990, description: 'total − refunded; 0 when cancelled.' })
  net!: number;
  @ApiProperty({ enum: ORDER_STATUSES }) status!: string;
  @ApiProperty({ type: () => [OrderLineSchema] }) lines!: OrderLineSchema[];
  @ApiProperty({ type: () => OrderAttributionSchema }) attribution!: OrderAttributionSchema;
  @ApiProperty(TIME) createdAt!: string;
  @ApiProperty(TIME) updatedAt!: string;
}
