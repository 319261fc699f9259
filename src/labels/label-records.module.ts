import { Module } from '@nestjs/common';
import { LabelRecordsRepository } from './label-records.repository';

/** The label-record SQL (LabelRecordsRepository), for every feature that reads or writes labels. */
@Module({ providers: [LabelRecordsRepository], exports: [LabelRecordsRepository] })
export class LabelRecordsModule {}
