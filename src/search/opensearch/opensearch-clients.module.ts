import { Module } from '@nestjs/common';
import { OpenSearchClients } from './opensearch-clients';

/** The OpenSearch clients (OpenSearchClients), one pair per application, for every module that searches or writes. */
@Module({ providers: [OpenSearchClients], exports: [OpenSearchClients] })
export class OpenSearchClientsModule {}
