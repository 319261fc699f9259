import { Module } from '@nestjs/common';
import { LabelWriter } from './label-writer.service';
import { VocabularyController } from './vocabulary.controller';

/** Taxonomy v1.1, the vocabulary endpoint and the label-record writer the labeling process calls. */
@Module({
  controllers: [VocabularyController],
  providers: [LabelWriter],
  exports: [LabelWriter],
})
export class LabelsModule {}
