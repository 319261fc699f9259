import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';

@ApiSchema({ name: 'OrderRevenue' })
export class OrderRevenueSchema {
  @ApiProperty({ example: 'EUR' }) currency!: string;
  @ApiProperty({ type: 'integer', description: 'Net of the orders (minor units).' }) net!: number;
  @ApiProperty({ type: 'integer', description: 'Net of those credited to a conversation.' })
  attributedNet!: number;
  @ApiProperty({ type: 'integer', description: 'Net of those credited with kind direct.' })
  directNet!: number;
}

@ApiSchema({ name: 'OrderStatsBucket' })
export class OrderStatsBucketSchema {
  @ApiProperty({ example: '2026-11-01T00:00:00.000+01:00', description: 'Bucket start, with its offset.' })
  start!: string;
  @ApiProperty({ type: 'integer' }) orders!: number;
  @ApiProperty({ type: 'integer' }) attributed!: number;
  @ApiProperty({ type: 'integer' }) direct!: number;
  @ApiProperty({ type: [OrderRevenueSchema] }) revenue!: OrderRevenueSchema[];
}

@ApiSchema({
  name: 'OrderStats',
  description:
    "The store's orders placed in the window and not cancelled, with the assistant's share beside them (outcomes-v1 §4). Exact after any write.",
})
export class OrderStatsSchema {
  @ApiProperty({ type: 'integer' }) orders!: number;
  @ApiProperty({ type: 'integer', description: 'Credited to a conversation.' }) attributed!: number;
  @ApiProperty({ type: 'integer', description: 'Credited with kind direct.' }) direct!: number;
  @ApiProperty({ type: [OrderRevenueSchema], description: 'One entry per currency, alphabetical.' })
  revenue!: OrderRevenueSchema[];
  @ApiPropertyOptional({
    type: [OrderStatsBucketSchema],
    description: 'With interval: one bucket per interval.',
  })
  series?: OrderStatsBucketSchema[];
}
